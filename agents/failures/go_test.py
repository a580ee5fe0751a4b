"""`go test`'s output read: each test that failed (`--- FAIL: TestX`, the lines it logged
under it, `file_test.go:7: got 5, want 12`), a panic (`panic: …`, its frame in the test
file), and a package that could not be built (a `# pkg` header, then `file.go:12:5: message`
lines, then `FAIL pkg [build failed]` or `[setup failed]`): a failure loading the test.

What a build says is missing: a name (`undefined: Discounted`, `undefined: shop.Discounted`,
`x.Apply undefined (type T has no field or method Apply)`) or a package (`no required module
provides package example.com/shop/coupons`, `package x is not in GOROOT`, `cannot find
package "x"`). A package without a test (`[no test files]`), a run that matched none
(`[no tests to run]`), a missing `go.mod` and a module to download (runs have no network) say
that no test ran; so does `-v`'s report of each test skipped (`--- SKIP: TestX`) and none
passed, which `go test` exits 0 with (without `-v` it does not tell a skipped test).
"""

import re

from agents.failures.failure import (
    MESSAGE_CHARS,
    Absence,
    Failure,
    Missing,
    OutputReading,
    Stage,
    none_ran,
)
from agents.failures.python import is_test

RUNNER = "go test"
BUILD = "build error"
"""A failure's `exception` when the package could not be built."""
TEST_FAILED = "test failed"
"""A failure's `exception` when a test failed by `t.Error`, `t.Fatal` and the like."""
PANIC = "panic"

_RESULT = re.compile(
    r"^(?:(?P<kind>FAIL|ok|\?)\s+\S+\s+(?:\[(?P<why>[\w ]+)\]|[\d.]+s(?: \[(?P<note>[\w ]+)\])?)"
    r"|--- FAIL: \S+)",
    re.MULTILINE,
)
_HEADER = re.compile(r"^# \S+(?: \[\S+\])?$")
_COMPILE = re.compile(r"^(?P<path>[^\s:]+\.go):(?P<line>\d+)(?::\d+)?: (?P<message>.+)$")
_FAILED_TEST = re.compile(r"^\s*--- FAIL: (?P<name>\S+)")
_LOGGED = re.compile(r"^\s+(?P<file>[\w.-]+\.go):(?P<line>\d+): (?P<message>.*)$")
_PANIC = re.compile(r"^panic: (?P<message>.*?)(?: \[recovered\])?$")
_FRAME = re.compile(r"^\s+(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$")
_UNDEFINED = re.compile(r"undefined: (?:(?P<within>\w+)\.)?(?P<name>\w+)")
_NO_FIELD = re.compile(r"\(type (?P<within>\S+) has no field or method (?P<name>\w+)")
_NO_PACKAGE = re.compile(
    r"(?:no required module provides package (?P<a>[^\s;]+)|package (?P<b>\S+) is not in "
    r"(?:GOROOT|std)|cannot find package \"(?P<c>[^\"]+)\")"
)
_ENDED = re.compile(r"^\s*--- (?P<word>PASS|SKIP): ", re.MULTILINE)
_WORDS = {"PASS": "passed", "SKIP": "skipped"}
_PROBLEMS = (
    (re.compile(r"\[no test files\]|no Go files in"), "the package has no test files"),
    (re.compile(r"\[no tests to run\]|testing: warning: no tests to run"), "no tests ran"),
    (re.compile(r"go\.mod file not found|cannot find main module"), "go test found no go.mod"),
    (
        re.compile(r"GOPROXY=off|module lookup disabled|dial tcp|proxy\.golang\.org"),
        "go test needed a module downloaded, and a test's run has no network",
    ),
)


def recognises(output: str) -> bool:
    return bool(_RESULT.search(output)) or any(p.search(output) for p, _ in _PROBLEMS[:3])


def read(output: str, test: str) -> OutputReading:
    lines = output.splitlines()
    failures = [*_build_failures(lines, test), *_test_failures(lines, test)]
    problem = None if failures else next((why for p, why in _PROBLEMS if p.search(output)), None)
    if not failures and problem is None:
        ended = [_WORDS[found["word"]] for found in _ENDED.finditer(output)]
        problem = none_ran({word: ended.count(word) for word in _WORDS.values()}, ("passed",))
    return OutputReading(RUNNER, tuple(failures), problem)


def _build_failures(lines: list[str], test: str) -> list[Failure]:
    """The compiler's errors, each a failure loading the test: those under a `# pkg` header
    (or its `setup failed` report), else none."""
    failures: list[Failure] = []
    inside = False
    for line in lines:
        if _HEADER.match(line):
            inside = True
        elif inside and (found := _COMPILE.match(line)):
            at = int(found["line"]) if is_test(found["path"], test) else None
            failures.append(_failure(BUILD, found["message"], at, Stage.LOADING))
        elif not line.startswith(("\t", " ")):
            inside = False
    return failures


def _test_failures(lines: list[str], test: str) -> list[Failure]:
    """Each test that failed, with the first line it logged in the test file, and a panic."""
    failures: list[Failure] = []
    name = ""
    logged: tuple[str, int] | None = None
    for n, line in enumerate(lines):
        if found := _FAILED_TEST.match(line):
            if name:
                failures.append(_logged(logged))
            name, logged = found["name"], None
        elif name and logged is None and (said := _LOGGED.match(line)):
            if is_test(said["file"], test.rsplit("/", 1)[-1]):
                logged = (said["message"], int(said["line"]))
        elif found := _PANIC.match(line):
            name = ""
            failures.append(_failure(PANIC, found["message"], _panic_line(lines[n:], test)))
            break
    if name:
        failures.append(_logged(logged))
    return failures


def _logged(logged: tuple[str, int] | None) -> Failure:
    message, line = logged if logged is not None else ("", None)
    return _failure(TEST_FAILED, message, line)


def _panic_line(lines: list[str], test: str) -> int | None:
    """The line of the test file the panic's goroutine was in, its first frame there."""
    for line in lines:
        if (frame := _FRAME.match(line)) and is_test(frame["path"], test):
            return int(frame["line"])
    return None


def _failure(kind: str, message: str, line: int | None, stage: Stage = Stage.RUNNING) -> Failure:
    shown = message.strip()[:MESSAGE_CHARS]
    return Failure(kind, shown, line, stage, _missing(message) if stage is Stage.LOADING else None)


def _missing(message: str) -> Missing | None:
    if found := _NO_PACKAGE.search(message):
        return Missing(Absence.MODULE, found["a"] or found["b"] or found["c"])
    if found := _NO_FIELD.search(message):
        return Missing(Absence.NAME, found["name"], found["within"].lstrip("*"))
    if found := _UNDEFINED.search(message):
        return Missing(Absence.NAME, found["name"], found["within"])
    return None
