"""Node's test runner's output read (`node --test`), by either of its reporters: TAP (`not ok
2 - total counts every price`, then a YAML block: `error:`, `name:`, the `stack:` whose first
frame in the test file is the failure's line), Node 20's default where the output is not a
terminal; and `spec` (`✖ total counts every price (1.1ms)`, then `AssertionError
[ERR_ASSERTION]: …` and its frames), the default of later Node.

A test file that dies before its tests run (a module it cannot find, an export it cannot
import) is reported as a failed test named by the file's path, `test failed`, its error printed
before (as TAP's `#` comments): a failure loading the test. What is missing is read from
JavaScript's messages: `Cannot find module '../src/coupons'` (resolved from the test's
folder to its path in the repository, `src/coupons`), `does not provide an export named
'discounted'`, `discounted is not a function`, `discounted is not defined`. No test at all
(`# tests 0`), or only the file's own (a file that defines no test passes as one), says that
no test ran; so do totals that count none passed or failed, each skipped (`# skipped 1`, or
the spec reporter's `skipped 1`) or left to do, which Node exits 0 with.
"""

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

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

RUNNER = "node --test"

_INFO = "\N{INFORMATION SOURCE}"
"""The spec reporter's mark before its totals."""
_TOTALS = re.compile(rf"^(?:#|{_INFO}) tests (?P<count>\d+)$", re.MULTILINE)
_COUNT = re.compile(
    rf"^(?:#|{_INFO}) (?P<word>pass|fail|cancelled|skipped|todo) (?P<n>\d+)$", re.MULTILINE
)
_RAN = ("pass", "fail", "cancelled")
_TOTAL = re.compile(r"(?P<n>\d+) (?P<word>passed|failed|skipped|todo)\b")
"""A count of jest's and vitest's totals (`Tests:       1 skipped, 1 total`)."""
_NOT_OK = re.compile(r"^\s*not ok \d+ - (?P<name>.*)$")
_SPEC_FAILED = re.compile(r"^\s*✖ (?P<name>.+?) \([\d.]+m?s\)$")
_KEY = re.compile(r"^\s+(?P<key>error|name|failureType|location): (?P<value>.*)$")
ERROR_LINE = re.compile(
    r"^(?:#\s*)?\s*(?P<type>[A-Z]\w*Error|Error)(?: \[[\w-]+\])?: (?P<message>.+)$"
)
_POSITION = re.compile(r"\(?(?:file://)?(?P<path>[^\s()]+?):(?P<line>\d+):\d+\)?$")
_NO_MODULE = re.compile(r"Cannot find (?:module|package) '(?P<name>[^']+)'")
_IMPORTED_FROM = re.compile(r" imported from (?:file://)?(?P<importer>\S+)")
_NO_EXPORT = re.compile(
    r"The requested module '(?P<within>[^']+)' does not provide an export named '(?P<name>[\w$]+)'"
)
_NOT_A_FUNCTION = re.compile(
    r"^\(?(?:0, )?(?:[\w$.]*\.)?(?P<name>[\w$]+)\)? is not a (?:function|constructor)"
)
_NOT_DEFINED = re.compile(r"^(?P<name>[\w$]+) is not defined")
_FILE_FAILED = "test failed"
SCRIPTS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
"""The suffixes of a JavaScript or TypeScript module, which a path naming one may leave out."""
_PASSED = re.compile(
    r"^(?:ok \d+ - (?P<tap>.+?)(?: # .*)?|✔ (?P<spec>.+?) \([\d.]+m?s\))$", re.MULTILINE
)


def recognises(output: str) -> bool:
    return bool(_TOTALS.search(output)) or output.lstrip().startswith("TAP version")


def read(output: str, test: str) -> OutputReading:
    lines = output.splitlines()
    summary = next((n for n, line in enumerate(lines) if line.startswith("✖ failing tests")), None)
    lines = lines[:summary]
    failures = [f for n, line in enumerate(lines) if (f := _failure_at(lines, n, test))]
    return OutputReading(RUNNER, tuple(failures), None if failures else _none_ran(output, test))


def _none_ran(output: str, test: str) -> str | None:
    """Why no test ran: none counted, the only one that passed is the file itself (a file
    that defines no test runs as one test, which passes), or each was skipped."""
    totals = _TOTALS.search(output)
    if totals is not None and totals["count"] == "0":
        return "no tests ran"
    passed = [m["tap"] or m["spec"] for m in _PASSED.finditer(output)]
    if passed and all(is_test(name, test) for name in passed):
        return "the test file defines no test"
    return none_ran({m["word"]: int(m["n"]) for m in _COUNT.finditer(output)}, _RAN)


def _failure_at(lines: list[str], n: int, test: str) -> Failure | None:
    """The failure reported at line `n`, if a failed test's report starts there."""
    if _NOT_OK.match(lines[n]):
        return _tap_failure(lines, n, test)
    if _SPEC_FAILED.match(lines[n]):
        return _spec_failure(lines, n, test)
    return None


def _tap_failure(lines: list[str], n: int, test: str) -> Failure:
    keys: dict[str, str] = {}
    block = _block(lines[n + 1 :], "  ...")
    for k, line in enumerate(block):
        if found := _KEY.match(line):
            value = found["value"].strip().strip("'\"")
            if value in ("|-", "|", ">-") and k + 1 < len(block):
                value = block[k + 1].strip()
            keys.setdefault(found["key"], value)
    if keys.get("error") == _FILE_FAILED:
        return _loading(lines[:n], test)
    return js_failure(keys.get("name", ""), keys.get("error", ""), line_in(block, test), test)


def _spec_failure(lines: list[str], n: int, test: str) -> Failure:
    block = _block(lines[n + 1 :], "")
    said = block[0].strip() if block else ""
    if said.strip("'\"") == _FILE_FAILED:
        return _loading(lines[:n], test)
    found = ERROR_LINE.match(said)
    kind, message = (found["type"], found["message"]) if found else ("", said)
    return js_failure(kind, message, line_in(block, test), test)


def _loading(before: list[str], test: str) -> Failure:
    """The test file's failure, which its last error printed before its report tells."""
    for k in range(len(before) - 1, -1, -1):
        if found := ERROR_LINE.match(before[k]):
            frames = before[k + 1 : k + 12]
            return js_failure(
                found["type"], found["message"], line_in(frames, test), test, loading=True
            )
    return Failure("", "", None, Stage.LOADING)


def _block(lines: list[str], end: str) -> list[str]:
    """The lines of one report, up to its end (or the next report): TAP's `  ...`, or the
    spec reporter's empty line (a message's own blank lines keep their indent)."""
    block = []
    for line in lines:
        if (
            (line.rstrip() == end if end else line == end)
            or _NOT_OK.match(line)
            or _SPEC_FAILED.match(line)
        ):
            break
        block.append(line)
    return block


def report_block(lines: list[str], end: re.Pattern[str]) -> list[str]:
    """The lines of one runner's report of a failure, stripped, up to the first that `end`
    matches (the next report, or the rule or totals that close them)."""
    block = []
    for line in lines:
        if end.match(line):
            break
        block.append(line.strip())
    return block


def line_in(block: list[str], test: str) -> int | None:
    """The test file's line that the first frame in it names (`at f (file:line:col)`, or
    vitest's marked `file:line:col`)."""
    for line in block:
        if (found := _POSITION.search(line.strip())) and is_test(found["path"], test):
            return int(found["line"])
    return None


@dataclass(frozen=True)
class ReportMarks:
    """How a runner's output marks its reports of failures (see :func:`read_reports`)."""

    report: re.Pattern[str]
    """A report's first line."""
    end: re.Pattern[str]
    """The line after a report's last: the next report, or the rule or totals after them."""
    no_test: str
    """A test file that defines no test."""
    no_files: str
    """No test file matched."""
    tests: re.Pattern[str]
    """The line of totals that counts the tests: passed, failed, skipped."""


def js_failure(
    kind: str, message: str, line: int | None, test: str, *, loading: bool = False
) -> Failure:
    """A JavaScript runner's failure: its error's `kind` and `message` (cut), the test file's
    `line`, and what the message says is missing; of the file's loading, or of a test's run."""
    stage = Stage.LOADING if loading else Stage.RUNNING
    shown = message.strip()[:MESSAGE_CHARS]
    return Failure(kind, shown, line, stage, missing_in(shown, test))


def read_reports(
    output: str,
    test: str,
    runner: str,
    marks: ReportMarks,
    failure: Callable[[list[str], str, re.Match[str]], Failure],
) -> OutputReading:
    """The failures of a runner that reports each one in a block of its own (jest's and
    vitest's): each line `marks.report` matches opens one, read by `failure` (its block, the
    test, the opening line's match); a block saying `marks.no_test` means the file defines
    no test, and no report with `marks.no_files` in the output, or with totals that count
    no test passed or failed, that no test ran."""
    lines = output.splitlines()
    failures = []
    for n, line in enumerate(lines):
        if found := marks.report.match(line):
            block = report_block(lines[n + 1 :], marks.end)
            if any(marks.no_test in said for said in block):
                return OutputReading(runner, (), "the test file defines no test")
            failures.append(failure(block, test, found))
    if failures:
        return OutputReading(runner, tuple(failures))
    if marks.no_files in output:
        return OutputReading(runner, (), "no tests ran")
    totals = [found[0] for found in marks.tests.finditer(output)]
    counts = {m["word"]: int(m["n"]) for m in _TOTAL.finditer(totals[-1] if totals else "")}
    return OutputReading(runner, (), none_ran(counts, ("passed", "failed")))


def missing_in(message: str, test: str) -> Missing | None:
    """What a JavaScript error's `message` says is missing, a module's path resolved from
    the test at `test`; jest's, vitest's and mocha's readers read it so too."""
    if found := _NO_MODULE.search(message):
        return Missing(Absence.MODULE, _module_path(found["name"], message, test))
    if found := _NO_EXPORT.search(message):
        return Missing(Absence.NAME, found["name"], _module_path(found["within"], "", test))
    if found := _NOT_A_FUNCTION.match(message) or _NOT_DEFINED.match(message):
        return Missing(Absence.NAME, found["name"])
    return None


def _module_path(name: str, message: str, test: str) -> str:
    """A module's path in the repository without its suffix, as a test at `test` names it
    (relative to its folder, or absolute with the test's own absolute path said); a package's
    name as it is."""
    if name.startswith("."):
        name = posixpath.normpath(posixpath.join(posixpath.dirname(test), name))
    elif name.startswith("/") and (found := _IMPORTED_FROM.search(message)):
        importer = found["importer"]
        if is_test(importer, test):
            root = importer[: len(importer) - len(test)]
            name = name.removeprefix(root)
    return _without_suffix(name)


def _without_suffix(path: str) -> str:
    stem, suffix = posixpath.splitext(path)
    return (
        stem if suffix in (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx") else path
    )
