"""pytest's output read: each failure's section (a failing test's, a file's that could not be
collected), else the short summary's lines when the sections are cut off or not printed, and
why no test ran when pytest says so: `no tests ran`, or totals that count no test passed or
failed (`1 skipped`, which pytest exits 0 with; `1 deselected`, `1 xfailed`).

A section opens with its title between underscores (`___ test_it ___`, `___ ERROR collecting
tests/test_x.py ___`). In it, the exception's type is the one the long traceback's last
location names (`shop/cart.py:2: TypeError`), or the one an `E` line starts with; its
message is that `E` line's (or an assertion's, `assert 12 == 13`); the test's line is the
last location or frame in the test file.
"""

import re

from agents.failures import python
from agents.failures.failure import Failure, OutputReading, Stage, none_ran

RUNNER = "pytest"

_BANNER = re.compile(
    r"^=+ (?:FAILURES|ERRORS|short test summary info|test session starts) =+$", re.MULTILINE
)
_TOTALS = re.compile(
    r"^=*\s*(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected)"
    r"(?:, )?)+ in [\d.]+s",
    re.MULTILINE,
)
_COUNT = re.compile(
    r"(?P<n>\d+) (?P<word>failed|passed|errors?|skipped|xfailed|xpassed|deselected)"
)
_RAN = frozenset({"failed", "passed", "error", "errors", "xpassed"})
_NO_TESTS = re.compile(r"^=*\s*no tests ran in [\d.]+s", re.MULTILINE)
_NOT_FOUND = re.compile(r"^ERROR: file or directory not found: (?P<path>.+)$", re.MULTILINE)
_USAGE = re.compile(r"^(?:ERROR: usage: .*|\S+: error: (?P<error>.+))$", re.MULTILINE)
_SECTION = re.compile(r"^_{3,} (?P<title>.+?) _{3,}$")
_SUMMARY = re.compile(r"^(?P<kind>FAILED|ERROR) (?P<node>\S+?)(?: - (?P<message>.*))?$")
_LOCATION = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): ?(?P<rest>.*)$")
_BARE_TYPE = re.compile(r"^[A-Za-z_][\w.]*$")
_TYPED = re.compile(r"^(?:[\w]+\.)*[A-Z]\w*: ")
_COLLECTING = "ERROR collecting "


def recognises(output: str) -> bool:
    return bool(
        _BANNER.search(output)
        or _TOTALS.search(output)
        or _NO_TESTS.search(output)
        or "INTERNALERROR>" in output
    )


def read(output: str, test: str) -> OutputReading:
    sections = _sections(output)
    failures = tuple(_section_failure(title, body, test) for title, body in sections)
    if not failures:
        failures = tuple(_summary_failures(output))
    return OutputReading(RUNNER, failures, _problem(output))


def _problem(output: str) -> str | None:
    if found := _NOT_FOUND.search(output):
        return f"pytest found no file {found['path'].strip()[:200]}"
    if found := _USAGE.search(output):
        return f"pytest's usage error: {(found['error'] or found[0]).strip()[:200]}"
    if "INTERNALERROR>" in output:
        return "pytest failed on its own (INTERNALERROR)"
    if _NO_TESTS.search(output):
        return "no tests ran"
    totals = [found[0] for found in _TOTALS.finditer(output)]
    if not totals:
        return None
    return none_ran({m["word"]: int(m["n"]) for m in _COUNT.finditer(totals[-1])}, _RAN)


def _sections(output: str) -> list[tuple[str, list[str]]]:
    """Each failure's section: its title and its lines, up to the next title or banner."""
    sections: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        if title := _SECTION.match(line):
            sections.append((title["title"], []))
        elif _BANNER.match(line):
            if sections and sections[-1][1]:
                # The summary and totals end the last section.
                sections.append(("", []))
        elif sections:
            sections[-1][1].append(line)
    return [(title, body) for title, body in sections if title]


def _section_failure(title: str, body: list[str], test: str) -> Failure:
    stage = Stage.LOADING if title.startswith(_COLLECTING) else Stage.RUNNING
    shown = [line[1:].strip() for line in body if line[:2] in ("E ", "E\t") or line == "E"]
    located = [m for line in body if (m := _LOCATION.match(line))]
    kind = next((m["rest"] for m in reversed(located) if _BARE_TYPE.match(m["rest"])), "")
    if not shown and python.TRACEBACK in "\n".join(body):  # --tb=native
        native = python.last_traceback("\n".join(body), test, stage)
        if native is not None:
            return native
    kind, message = _exception(kind, shown)
    line = python.test_line(shown, test)
    for found in located:
        if python.is_test(found["path"], test):
            line = int(found["line"])
    return python.failure(kind, message, line, stage)


def _exception(kind: str, shown: list[str]) -> tuple[str, str]:
    """The exception's type and message, from the location's type and the `E` lines."""
    for text in shown:
        if kind and text.startswith(kind + ":"):
            return kind, text[len(kind) + 1 :].strip()
        if not kind and _TYPED.match(text):
            typed = python.exception_of(text)
            if typed is not None:
                return typed
    first = next((t for t in shown if t and not t.startswith("File ")), "")
    if first.startswith("assert"):
        return kind or "AssertionError", first
    return kind, first if kind else ""


def _summary_failures(output: str) -> list[Failure]:
    """The failures of the short summary (`FAILED node - message`, `ERROR path`): each
    message as printed, which pytest may have cut to the terminal's width."""
    failures = []
    for line in output.splitlines():
        found = _SUMMARY.match(line)
        if found is None:
            continue
        loading = found["kind"] == "ERROR" and "::" not in found["node"]
        stage = Stage.LOADING if loading else Stage.RUNNING
        message = (found["message"] or "").removesuffix("...")
        typed = python.exception_of(message) if _TYPED.match(message) else None
        if typed is not None:
            failures.append(python.failure(*typed, stage=stage))
        elif message.startswith("assert"):
            failures.append(python.failure("AssertionError", message, stage=stage))
        else:
            failures.append(python.failure("", message, stage=stage))
    return failures
