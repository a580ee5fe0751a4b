"""How a repository's tests are written, read from the repository itself: the tester is told
them so that a finding's test is written where and as the project's are, and run by the
command's runner.

From the paths of the repository's files (a checkout's, or the snapshot at the head and the
changed files, for the App) and the command that runs a test, purely:

* which runner the command uses (`pytest`, `unittest`, `go test`, `node --test`, jest,
  vitest, mocha; `npm test` runs the package's own script), and the test's language;
* where the tests live and how they are named, each way by how many tests follow it, the
  most followed first: `tests/test_*.py`, `*_test.go` beside its package's files,
  `test/*.test.js`, `__tests__/*.js` beside the code;
* a few of the tests, as examples.

A test file is known by its language's usual names (:func:`test_kind`). What is read is
bounded: the paths given are the listing's (itself bounded), and what is told is a few ways
and examples, so that every call of a unit reads the same few lines in its cached prefix.
"""

import os
import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

MAX_WAYS = 3
MAX_EXAMPLES = 3
TEST_FOLDERS = frozenset({"test", "tests", "__tests__", "spec", "testing"})

_PYTHON_TEST = re.compile(r"^(?:test_.*|.*_test)\.py$")
_GO_TEST = re.compile(r"^.*_test\.go$")
_SCRIPT_TEST = re.compile(r"^.*\.(?P<kind>test|spec)\.(?P<suffix>[cm]?[jt]sx?)$")
_SCRIPT = re.compile(r"^.*\.(?P<suffix>[cm]?[jt]sx?)$")
_RUNNERS = (
    (re.compile(r"(?:^|\s)(?:\S*/)?go test(?:\s|$)"), "go test", "go"),
    (re.compile(r"(?:^|\s)(?:\S*/)?node\s(?:.*\s)?--test(?:\s|$)"), "node --test", "javascript"),
    (re.compile(r"(?:^|\s)(?:\S*/)?(?:jest)(?:\s|$)"), "jest", "javascript"),
    (re.compile(r"(?:^|\s)(?:\S*/)?(?:vitest)(?:\s|$)"), "vitest", "javascript"),
    (re.compile(r"(?:^|\s)(?:\S*/)?(?:mocha)(?:\s|$)"), "mocha", "javascript"),
    (
        re.compile(r"(?:^|\s)(?:npm|yarn|pnpm)(?:\s+run)?\s+test(?:\s|$)"),
        "the package's test script",
        "javascript",
    ),
    (re.compile(r"(?:^|\s)-m\s+unittest(?:\s|$)"), "unittest", "python"),
    (re.compile(r"(?:^|\s)(?:\S*/)?(?:py\.test|pytest)(?:\s|$)"), "pytest", "python"),
    (re.compile(r"(?:^|\s)(?:\S*/)?python[\d.]*\s"), "python", "python"),
)


class ProjectTests(BaseModel):
    """The repository's tests, as its tester is told them."""

    model_config = ConfigDict(frozen=True)

    runner: str
    """The command's runner, in words (empty: not known)."""
    language: str = ""
    """The language of the tests the runner runs (`python`, `go`, `javascript`)."""
    ways: tuple[str, ...] = ()
    """Where the tests live and how they are named, the most followed first."""
    examples: tuple[str, ...] = ()
    """A few of the tests' paths, of the ways told."""

    @classmethod
    def of(cls, paths: Iterable[str], command: str) -> "ProjectTests":
        """The conventions of a repository holding the files at `paths`, whose tests run with
        `command`."""
        runner, language = runner_of(command)
        counted: Counter[str] = Counter()
        seen: dict[str, list[str]] = {}
        for path in sorted(set(paths)):
            kind = test_kind(path)
            if kind is None or (language and kind[0] != language):
                continue
            counted[kind[1]] += 1
            seen.setdefault(kind[1], []).append(path)
        ways = tuple(way for way, _ in counted.most_common(MAX_WAYS))
        examples = [path for way in ways for path in seen[way][:1]]
        examples += [p for way in ways for p in seen[way][1:]][: MAX_EXAMPLES - len(examples)]
        return cls(
            runner=runner,
            language=language,
            ways=tuple(f"{way} ({_files(counted[way])})" for way in ways),
            examples=tuple(examples[:MAX_EXAMPLES]),
        )


def runner_of(command: str) -> tuple[str, str]:
    """The runner `command` uses and the language of its tests, in words; empty when not
    known."""
    try:
        words = " ".join(os.path.basename(w) if "/" in w else w for w in shlex.split(command))
    except ValueError:
        words = command
    for pattern, runner, language in _RUNNERS:
        if pattern.search(" " + words + " "):
            return runner, language
    return "", ""


def test_kind(path: str) -> tuple[str, str] | None:
    """The language of the test at `path` and the way it follows (where, how named), or None
    for a file that is no test."""
    folder, name = posixpath.split(path)
    parts = folder.split("/") if folder else []
    top = next((p for p in parts if p in TEST_FOLDERS), None)
    if _GO_TEST.match(name):
        return "go", "`*_test.go` beside its package's files"
    if _PYTHON_TEST.match(name):
        glob = "test_*.py" if name.startswith("test_") else "*_test.py"
        return "python", f"{_under(parts, top)}/{glob}" if top else f"{glob} beside the code"
    if found := _SCRIPT_TEST.match(name):
        glob = f"*.{found['kind']}.{found['suffix']}"
        return "javascript", f"{_under(parts, top)}/{glob}" if top else f"{glob} beside the code"
    if top and (found := _SCRIPT.match(name)):
        return "javascript", f"{_under(parts, top)}/*.{found['suffix']}"
    return None


def _under(parts: list[str], top: str | None) -> str:
    """The test folder, as deep as the path goes to reach it (`tests`, `src/**/__tests__`)."""
    if top is None:
        return ""
    depth = parts.index(top)
    return top if depth == 0 else f"{parts[0]}/**/{top}" if depth > 1 else f"{parts[0]}/{top}"


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"
