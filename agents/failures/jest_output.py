"""jest's output read: each failed test's report (`● total counts every price`, then what
failed: `TypeError: discounted is not a function`, or a matcher's `expect(received).toBe(
expected)` with its `Expected:` and `Received:` lines, then the code around it and the frame
in the test file, `at Object.toBe (test/prices.test.js:4:28)`), and a test file that could
not be loaded (`● Test suite failed to run`: a module it cannot find, `Cannot find module
'../src/coupons' from 'test/coupons.test.js'`, or a syntax error).

What is missing is read as `node --test`'s reader reads it (:func:`agents.failures.node_test.
missing_in`). No test file matched (`No tests found`) or one that defines no test (`Your test
suite must contain at least one test.`) says that no test ran, and so do totals that count
none passed or failed (`Tests:       1 skipped, 1 total`, which jest exits 0 with).
"""

import re

from agents.failures.failure import Failure, OutputReading
from agents.failures.node_test import ERROR_LINE, ReportMarks, js_failure, line_in, read_reports

RUNNER = "jest"

_TOTALS = re.compile(r"^Tests:\s+.*\d+ total$", re.MULTILINE)
_MARKS = ReportMarks(
    report=re.compile(r"^  ● (?P<name>.+)$"),
    end=re.compile(r"^(?:Test Suites:|  ● )"),
    no_test="Your test suite must contain at least one test.",
    no_files="No tests found, exiting with code",
    tests=_TOTALS,
)
_SUITE = "Test suite failed to run"
_MATCHER = re.compile(r"^expect\(\w+\)\.(?P<matcher>[\w.]+)\(")
_VALUES = re.compile(r"^(?:Expected|Received)[\w ]*: ")


def recognises(output: str) -> bool:
    return bool(_TOTALS.search(output)) or _MARKS.no_files in output


def read(output: str, test: str) -> OutputReading:
    return read_reports(output, test, RUNNER, _MARKS, _failure)


def _failure(block: list[str], test: str, report: re.Match[str]) -> Failure:
    said = [line for line in block if line]
    first = said[0] if said else ""
    if found := _MATCHER.match(first):
        values = "; ".join(line for line in said if _VALUES.match(line))
        kind, message = f"expect.{found['matcher']}", values or first
    elif found := ERROR_LINE.match(first):
        kind, message = found["type"], found["message"]
    else:
        kind, message = "", first
    loading = report["name"] == _SUITE
    return js_failure(kind, message, line_in(block, test), test, loading=loading)
