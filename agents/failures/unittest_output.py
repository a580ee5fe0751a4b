"""unittest's output read (`python -m unittest`): each failure's section, between lines of `=`
— `FAIL: test_it (tests.test_x.T.test_it)` or `ERROR: …`, then its traceback — and whether
any test ran (`Ran 0 tests`).

A test module that could not be imported is reported as the error of a test unittest makes
up for it (`unittest.loader._FailedTest`, "Failed to import test module"): a failure loading
the test, whose traceback ends with the real error.
"""

import re

from agents.failures import python
from agents.failures.failure import Failure, OutputReading, Stage

RUNNER = "unittest"

_RAN = re.compile(r"^Ran (?P<count>\d+) tests? in [\d.]+s$", re.MULTILINE)
_HEADER = re.compile(r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): \S+ \((?P<id>[^)]*)\)")
_RULE = re.compile(r"^(?:={60,}|-{60,})$")
_NOT_LOADED = ("_FailedTest", "Failed to import test module")


def recognises(output: str) -> bool:
    return bool(_RAN.search(output) or re.search(_HEADER.pattern, output, re.MULTILINE))


def read(output: str, test: str) -> OutputReading:
    failures = tuple(f for body in _sections(output) if (f := _failure(body, test)) is not None)
    ran = _RAN.search(output)
    none_ran = (ran is not None and ran["count"] == "0") or "NO TESTS RAN" in output
    return OutputReading(RUNNER, failures, "no tests ran" if none_ran and not failures else None)


def _sections(output: str) -> list[list[str]]:
    """Each failure's lines: its header, then its traceback up to the next rule."""
    sections: list[list[str]] = []
    inside = False
    for line in output.splitlines():
        if _HEADER.match(line):
            sections.append([line])
            inside = True
        elif _RULE.match(line):
            # The rule under a header opens its traceback; any other closes the section.
            inside = inside and len(sections[-1]) == 1
        elif inside:
            sections[-1].append(line)
    return sections


def _failure(body: list[str], test: str) -> Failure | None:
    text = "\n".join(body)
    stage = Stage.LOADING if any(mark in text for mark in _NOT_LOADED) else Stage.RUNNING
    return python.last_traceback(text, test, stage)
