"""Python's own ways of telling a failure, which its runners' readers share: an exception's
line (`Type: message`), a traceback's frames, and what an exception says is not there.

A traceback ends with its exception's line, the first line after its frames that is not
indented; a chained one is told last. What is missing is read from the messages Python gives
(`No module named 'a.b'`, `cannot import name 'x' from 'a.b'`, `module 'a.b' has no attribute
'x'`, `'T' object has no attribute 'x'`, `name 'x' is not defined`); a circular import's
`partially initialized module` is not an absence.
"""

import re

from agents.failures.failure import MESSAGE_CHARS, Absence, Failure, Missing, Stage

TRACEBACK = "Traceback (most recent call last):"
RUNNER_MODULES = frozenset({"pytest", "_pytest"})
"""Modules a test imports to be run, not to be tested: one missing is the environment's."""

NO_RUNNER = "the test's runner is not installed where it runs"

_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::[ \t]?(?P<message>.*))?$")
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_NO_MODULE = re.compile(r"No module named '(?P<name>[\w.]+)'")
_NO_NAME = re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<within>[\w.]+)'")
_NO_ATTRIBUTE = re.compile(
    r"^(?:module '(?P<module>[\w.]+)'|type object '(?P<type>[\w.]+)'|'(?P<object>[\w.]+)' "
    r"object) has no attribute '(?P<name>\w+)'"
)
_NOT_DEFINED = re.compile(r"^name '(?P<name>\w+)' is not defined")
_INTERPRETER = re.compile(r"^\S*python[\w.]*: No module named (?P<name>[\w.]+)$", re.MULTILINE)


def failure(
    exception: str, message: str, line: int | None = None, stage: Stage = Stage.RUNNING
) -> Failure:
    """A failure of `exception` with `message` (its first line is kept)."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    return Failure(
        exception=exception,
        message=first[:MESSAGE_CHARS],
        line=line,
        stage=stage,
        missing=missing(exception, first),
    )


def exception_of(text: str) -> tuple[str, str] | None:
    """An exception's type and message from its line (`KeyError: 'x'`, `StopIteration`)."""
    matched = _EXCEPTION.match(text.strip())
    if matched is None:
        return None
    return matched["type"], matched["message"] or ""


def missing(exception: str, message: str) -> Missing | None:
    """What `exception`'s `message` says is not there, if it says so."""
    kind = exception.rsplit(".", 1)[-1]
    if kind in ("ModuleNotFoundError", "ImportError"):
        if found := _NO_NAME.search(message):
            return Missing(Absence.NAME, found["name"], found["within"])
        if found := _NO_MODULE.search(message):
            return Missing(Absence.MODULE, found["name"])
    elif kind == "AttributeError" and (found := _NO_ATTRIBUTE.match(message)):
        within = found["module"] or found["type"] or found["object"]
        return Missing(Absence.NAME, found["name"], within)
    elif kind == "NameError" and (found := _NOT_DEFINED.match(message)):
        return Missing(Absence.NAME, found["name"])
    return None


def test_line(lines: list[str], test: str) -> int | None:
    """The line of the test file `test` (its path in the repository) that the last of the
    traceback frames in `lines` in it names."""
    found = None
    for text in lines:
        frame = _FRAME.match(text)
        if frame is not None and is_test(frame["path"], test):
            found = int(frame["line"])
    return found


def is_test(path: str, test: str) -> bool:
    """Whether `path`, as a runner prints it (relative, or absolute in its tree), is the test."""
    return path == test or path.endswith("/" + test)


def last_traceback(text: str, test: str, stage: Stage = Stage.RUNNING) -> Failure | None:
    """The failure the last traceback in `text` ends with (a chained exception's last)."""
    start = text.rfind(TRACEBACK)
    if start < 0:
        return None
    lines = text[start + len(TRACEBACK) :].splitlines()
    for n, line in enumerate(lines):
        if not line.strip() or line[:1].isspace():
            continue
        shown = exception_of(line)
        if shown is None:
            return None
        return failure(shown[0], shown[1], test_line(lines[:n], test), stage)
    return None


def interpreter_problem(output: str) -> str | None:
    """Why no test ran when the interpreter could not even find the command's module
    (`python -m pytest` where pytest is not installed)."""
    found = _INTERPRETER.search(output)
    if found is None:
        return None
    return f"No module named {found['name']}: {NO_RUNNER}"


def runner_missing(failures: tuple[Failure, ...]) -> str | None:
    """Why no test ran when the test could not import its own runner (`import pytest`)."""
    for shown in failures:
        absent = shown.missing
        if (
            absent is not None
            and absent.absence is Absence.MODULE
            and absent.name.split(".")[0] in RUNNER_MODULES
        ):
            return f"No module named '{absent.name}': {NO_RUNNER}"
    return None
