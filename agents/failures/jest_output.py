"""jest's output read: each failed test's report (`● total counts every price`, then what
failed: `TypeError: discounted is not a function`, or a matcher's `expect(received).toBe(
expected)` with its `Expected:` and `Received:` lines, then the code around it and the frame
in the test file, `at Object.toBe (test/prices.test.js:4:28)`), and a test file that could
not be loaded (`● Test suite failed to run`: a module it cannot find, `Cannot find module
'../src/coupons' from 'test/coupons.test.js'`, or a syntax error).

What is missing is read as `node --test`'s reader reads it (:func:`agents.failures.node_test.
missing_in`). No test file matched (`No tests found`) or one that defines no test (`Your test
suite must contain at least one test.`) says that no test ran.
"""

import re

from agents.failures.failure import MESSAGE_CHARS, Failure, OutputReading, Stage
from agents.failures.node_test import ERROR_LINE, line_in, missing_in, report_block

RUNNER = "jest"

_TOTALS = re.compile(r"^Tests:\s+.*\d+ total$", re.MULTILINE)
_NO_FILES = "No tests found, exiting with code"
_NO_TEST = "Your test suite must contain at least one test."
_REPORT = re.compile(r"^  ● (?P<name>.+)$")
_SUITE = "Test suite failed to run"
_END = re.compile(r"^(?:Test Suites:|  ● )")
_MATCHER = re.compile(r"^expect\(\w+\)\.(?P<matcher>[\w.]+)\(")
_VALUES = re.compile(r"^(?:Expected|Received)[\w ]*: ")


def recognises(output: str) -> bool:
    return bool(_TOTALS.search(output)) or _NO_FILES in output


def read(output: str, test: str) -> OutputReading:
    lines = output.splitlines()
    failures = []
    for n, line in enumerate(lines):
        if found := _REPORT.match(line):
            block = report_block(lines[n + 1 :], _END)
            if _NO_TEST in "\n".join(block):
                return OutputReading(RUNNER, (), "the test file defines no test")
            failures.append(_failure(block, test, loading=found["name"] == _SUITE))
    if failures:
        return OutputReading(RUNNER, tuple(failures))
    return OutputReading(RUNNER, (), "no tests ran" if _NO_FILES in output else None)


def _failure(block: list[str], test: str, loading: bool) -> Failure:
    said = [line for line in block if line]
    first = said[0] if said else ""
    if found := _MATCHER.match(first):
        values = "; ".join(line for line in said if _VALUES.match(line))
        kind, message = f"expect.{found['matcher']}", values or first
    elif found := ERROR_LINE.match(first):
        kind, message = found["type"], found["message"]
    else:
        kind, message = "", first
    shown = message.strip()[:MESSAGE_CHARS]
    stage = Stage.LOADING if loading else Stage.RUNNING
    return Failure(kind, shown, line_in(block, test), stage, missing_in(shown, test))
