"""mocha's output read: each failed test's report after its count (`1 failing`, then `1)
total` and its title, `AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:`
or `TypeError: discounted is not a function`, and the frame in the test file, `at
Context.<anonymous> (test/prices.test.js:6:12)`), and a test file that could not be loaded
(`Exception during run: Error: Cannot find module '../src/coupons'`, or a file's position
line, then its `SyntaxError`: one that does not parse, an export an ES module does not
provide).

What is missing is read as `node --test`'s reader reads it (:func:`agents.failures.node_test.
missing_in`). No test file matched (`Error: No test files found`), or nothing counted but
`0 passing` (a file that defines no test, which mocha passes), says that no test ran; `0
passing` beside `1 pending` (each test skipped, which mocha passes too) that it was skipped.
"""

import re

from agents.failures.failure import SKIPPED, Failure, OutputReading
from agents.failures.node_test import ERROR_LINE, js_failure, line_in

RUNNER = "mocha"

_PASSING = re.compile(r"^\s+(?P<count>\d+) passing \([\d.]+m?s\)$", re.MULTILINE)
_FAILING = re.compile(r"^\s+\d+ failing$")
_PENDING = re.compile(r"^\s+(?P<count>\d+) pending$", re.MULTILINE)
_REPORT = re.compile(r"^  \d+\) ")
_EXCEPTION = "Exception during run: "
_NO_FILES = "Error: No test files found"
_POSITION = re.compile(r"^(?:file://)?(?P<path>\S+):(?P<line>\d+)$")
"""Where Node says a file failed to parse or link: its path and line, alone on a line."""


def recognises(output: str) -> bool:
    return bool(_PASSING.search(output)) or _EXCEPTION in output or _NO_FILES in output


def read(output: str, test: str) -> OutputReading:
    lines = output.splitlines()
    if loading := _loading(lines, test):
        return OutputReading(RUNNER, (loading,))
    start = next((n for n, line in enumerate(lines) if _FAILING.match(line)), len(lines))
    reports = [n for n in range(start, len(lines)) if _REPORT.match(lines[n])]
    ends = [*reports[1:], len(lines)]
    failures = [_failure(lines[n:end], test) for n, end in zip(reports, ends, strict=False)]
    if failures:
        return OutputReading(RUNNER, tuple(failures))
    if _NO_FILES in output:
        return OutputReading(RUNNER, (), "no tests ran")
    passing = _PASSING.search(output)
    if passing is None or passing["count"] != "0":
        return OutputReading(RUNNER)
    if pending := _PENDING.search(output):
        return OutputReading(RUNNER, (), f"{SKIPPED} ({pending['count']} pending)")
    return OutputReading(RUNNER, (), "no tests ran")


def _loading(lines: list[str], test: str) -> Failure | None:
    """The test file's failure to load, when mocha says the run stopped on an exception."""
    start = next((n for n, line in enumerate(lines) if _EXCEPTION in line), None)
    if start is None:
        return None
    block = [lines[start].split(_EXCEPTION, 1)[1], *lines[start + 1 :]]
    at = next((m for line in block[:3] if (m := _POSITION.match(line.strip()))), None)
    line = int(at["line"]) if at and at["path"].endswith("/" + test) else None
    found = next((m for said in block if (m := ERROR_LINE.match(said.strip()))), None)
    kind, message = (found["type"], found["message"]) if found else ("", block[0])
    line = line if line is not None else line_in(block, test)
    return js_failure(kind, message, line, test, loading=True)


def _failure(report: list[str], test: str) -> Failure:
    block = [line.strip() for line in report]
    found = next((m for said in block if (m := ERROR_LINE.match(said))), None)
    kind, message = (found["type"], found["message"]) if found else ("", "")
    return js_failure(kind, message, line_in(block, test), test)
