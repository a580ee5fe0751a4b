"""vitest's output read: each failure's report (` FAIL  test/prices.test.js > total counts
every price`, then `AssertionError: expected 6 to be 7 // Object.is equality` or `TypeError:
discounted is not a function`, and the frame in the test file, marked `test/prices.test.js:5:28`),
and a test file that could not be loaded (` FAIL  test/coupons.test.js [ test/coupons.test.js
]`: `Error: Cannot find module '../src/coupons.mjs' imported from …`, or source it could not
parse).

What is missing is read as `node --test`'s reader reads it (:func:`agents.failures.node_test.
missing_in`). No test file matched (`No test files found`) or one that defines no test (`No
test suite found in file`) says that no test ran.
"""

import re

from agents.failures.failure import MESSAGE_CHARS, Failure, OutputReading, Stage
from agents.failures.node_test import ERROR_LINE, line_in, missing_in, report_block

RUNNER = "vitest"

_TOTALS = re.compile(r"^\s*Test Files\s+.*\(\d+\)$", re.MULTILINE)
_NO_FILES = "No test files found, exiting with code"
_NO_TEST = "No test suite found in file"
_REPORT = re.compile(r"^ FAIL  \S+(?P<suite> \[ \S+ \])?")
_END = re.compile(r"^(?: FAIL  |⎯{3,})")


def recognises(output: str) -> bool:
    return bool(_TOTALS.search(output)) or _NO_FILES in output


def read(output: str, test: str) -> OutputReading:
    lines = output.splitlines()
    failures = []
    for n, line in enumerate(lines):
        if found := _REPORT.match(line):
            block = report_block(lines[n + 1 :], _END)
            if any(_NO_TEST in said for said in block):
                return OutputReading(RUNNER, (), "the test file defines no test")
            failures.append(_failure(block, test, loading=bool(found["suite"])))
    if failures:
        return OutputReading(RUNNER, tuple(failures))
    return OutputReading(RUNNER, (), "no tests ran" if _NO_FILES in output else None)


def _failure(block: list[str], test: str, loading: bool) -> Failure:
    said = next((line for line in block if line), "")
    found = ERROR_LINE.match(said)
    kind, message = (found["type"], found["message"]) if found else ("", said)
    shown = message.strip()[:MESSAGE_CHARS]
    stage = Stage.LOADING if loading else Stage.RUNNING
    return Failure(kind, shown, line_in(block, test), stage, missing_in(shown, test))
