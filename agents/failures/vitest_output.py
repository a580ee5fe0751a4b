"""vitest's output read: each failure's report (` FAIL  test/prices.test.js > total counts
every price`, then `AssertionError: expected 6 to be 7 // Object.is equality` or `TypeError:
discounted is not a function`, and the frame in the test file, marked `test/prices.test.js:5:28`),
and a test file that could not be loaded (` FAIL  test/coupons.test.js [ test/coupons.test.js
]`: `Error: Cannot find module '../src/coupons.mjs' imported from …`, or source it could not
parse).

What is missing is read as `node --test`'s reader reads it (:func:`agents.failures.node_test.
missing_in`). No test file matched (`No test files found`) or one that defines no test (`No
test suite found in file`) says that no test ran, and so do totals that count none passed or
failed (`Tests  1 skipped (1)`, which vitest exits 0 with).
"""

import re

from agents.failures.failure import Failure, OutputReading
from agents.failures.node_test import ERROR_LINE, ReportMarks, js_failure, line_in, read_reports

RUNNER = "vitest"

_TOTALS = re.compile(r"^\s*Test Files\s+.*\(\d+\)$", re.MULTILINE)
_MARKS = ReportMarks(
    report=re.compile(r"^ FAIL  \S+(?P<suite> \[ \S+ \])?"),
    end=re.compile(r"^(?: FAIL  |⎯{3,})"),
    no_test="No test suite found in file",
    no_files="No test files found, exiting with code",
    tests=re.compile(r"^\s*Tests\s+.*\(\d+\)$", re.MULTILINE),
)


def recognises(output: str) -> bool:
    return bool(_TOTALS.search(output)) or _MARKS.no_files in output


def read(output: str, test: str) -> OutputReading:
    return read_reports(output, test, RUNNER, _MARKS, _failure)


def _failure(block: list[str], test: str, report: re.Match[str]) -> Failure:
    said = next((line for line in block if line), "")
    found = ERROR_LINE.match(said)
    kind, message = (found["type"], found["message"]) if found else ("", said)
    loading = bool(report["suite"])
    return js_failure(kind, message, line_in(block, test), test, loading=loading)
