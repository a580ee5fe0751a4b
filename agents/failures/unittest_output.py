"""unittest's output read (`python -m unittest`): each failure's section, between lines of `=`
— `FAIL: test_it (tests.test_x.T.test_it)` or `ERROR: …`, then its traceback — and whether
any test ran: `Ran 0 tests`, or every test it ran skipped (`Ran 1 test`, then `OK
(skipped=1)`, which unittest exits 0 with) or expected to fail.

A test module that could not be imported is reported as the error of a test unittest makes
up for it (`unittest.loader._FailedTest`, "Failed to import test module"): a failure loading
the test, whose traceback ends with the real error.
"""

import re

from agents.failures import python
from agents.failures.failure import Failure, OutputReading, Stage, none_ran

RUNNER = "unittest"

_RAN = re.compile(r"^Ran (?P<count>\d+) tests? in [\d.]+s$", re.MULTILINE)
_OK = re.compile(r"^OK \((?P<counts>[^)]*)\)$", re.MULTILINE)
_COUNT = re.compile(r"(?P<word>skipped|expected failures)=(?P<n>\d+)")
_WORDS = {"skipped": "skipped", "expected failures": "expected to fail"}
_HEADER = re.compile(r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): \S+ \((?P<id>[^)]*)\)")
_RULE = re.compile(r"^(?:={60,}|-{60,})$")
_NOT_LOADED = ("_FailedTest", "Failed to import test module")


def recognises(output: str) -> bool:
    return bool(_RAN.search(output) or re.search(_HEADER.pattern, output, re.MULTILINE))


def read(output: str, test: str) -> OutputReading:
    failures = tuple(f for body in _sections(output) if (f := _failure(body, test)) is not None)
    return OutputReading(RUNNER, failures, None if failures else _problem(output))


def _problem(output: str) -> str | None:
    """Why no test ran: none did, or each it ran was skipped or expected to fail."""
    ran = _RAN.search(output)
    if (ran is not None and ran["count"] == "0") or "NO TESTS RAN" in output:
        return "no tests ran"
    ok = _OK.search(output)
    if ran is None or ok is None:
        return None
    set_aside = {_WORDS[m["word"]]: int(m["n"]) for m in _COUNT.finditer(ok["counts"])}
    passed = int(ran["count"]) - sum(set_aside.values())
    return none_ran({"passed": passed, **set_aside}, ("passed",))


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
