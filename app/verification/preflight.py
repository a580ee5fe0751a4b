"""The pre-flight: before any model is asked anything, the project's environment shows it can
run a test at all.

The verify command runs once, at the base, in the sandbox as every test does, on a trivial
test written for the purpose: not on one of the project's own tests, whose failure could be a
real bug, a flaky test or a slow one, and would tell nothing sure of the environment. The
trivial test passes wherever tests can run (a `unittest.TestCase` with one empty test, which
pytest and unittest both run), and it is written where the project's tests are (`tests/`,
else `test/`, else the root), so that their `conftest.py` loads as a finding's test's would.
Anything but a pass says the environment cannot run tests, and why, in one line: the runner
missing ("No module named pytest"), the command not found (127), a collection or import error.

The trivial test is in the command's language (:func:`trivial_for`): Python's when the command
runs Python (`python`, `python3.12`, `pytest` or `py.test` among its words); Go's when it runs
`go test` (a package of its own, `tiebreakenvironment/`, whose test passes: it checks Go, the
module's `go.mod` and a build without a network); Node's when it runs `node --test` (a
CommonJS file, `.cjs`, which a project of ES modules runs too, beside the project's tests).
Another command (`npm test`, jest, vitest) is not checked before the review, which is said
(:func:`unchecked`); a runner that cannot start shows in its first test's run, `broken`.
"""

import itertools
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from agents.protocol import Reproduction
from agents.verification import Run

NAME = "test_tiebreak_environment.py"
FOLDERS = ("tests", "test")
"""Where the project's tests are looked for, in this order (else the root)."""
CONTENT = '''\
"""Written by Tiebreak before a review: a test that passes wherever tests can run."""

import unittest


class TestTiebreakEnvironment(unittest.TestCase):
    def test_runs(self):
        pass
'''
PYTHON = re.compile(r"python(\d+(\.\d+)*)?|pytest|py\.test")
"""A word of a command that runs Python's tests, as its program's name."""
TELLING = ("No module named", "not found", "rror")
"""What the line that says why holds, by preference (`rror`: an error's name)."""
MAX_LINE = 300
_ASSERTION = re.compile(r"^E\s+")
"""pytest's mark before each line of a failure's explanation."""
_SUMMARY = re.compile(r"[=!\s]*(\d+ \w+(, )?)+ in [\d.]+s[=!\s]*|[=!\s]*Interrupted.*")
"""pytest's count of what ran (`1 error in 0.12s`), or its `Interrupted` line."""
_GO_REGISTER = re.compile(r"(r[a-z0-9]{1,3}|rip|rflags|cs|fs|gs) +0x[0-9a-f]+")
"""A line of the registers a Go program's runtime prints as it dies of a signal (the last of
its dump, after every goroutine's stack)."""
_GO_SIGNAL = re.compile(r"SIG[A-Z]+: .+")
"""The first line of that dump: the signal (`SIGABRT: abort`, `SIGSEGV: segmentation
violation`)."""
GO_CRASH = (
    "a Go program crashed: its runtime's dump of goroutines and registers, whose first line "
    "(the signal) is before the output kept"
)
_GO_CGO = "runtime/cgo: "
"""What a Go program linked with C says as it aborts, before its signal's line: why it did
(`runtime/cgo: pthread_create failed: Resource temporarily unavailable`)."""
GO_RESERVATION = (
    "failed to reserve page summary memory",
    "out of memory allocating heap arena map",
)
"""What Go's runtime says as it dies when the address space it reserves at its start, far more
than it uses, is refused."""
GO_RESERVATION_HINT = (
    "Go could not reserve the address space it needs: where no cgroup holds a run "
    "(--no-memory-limit, --no-sandbox), each process is held to verify.memory_mb of it, and "
    "the go tool wants 2048"
)


GO_CONTENT = """\
// Written by Tiebreak before a review: a test that passes wherever tests can run.
package tiebreakenvironment

import "testing"

func TestRuns(t *testing.T) {}
"""
NODE_CONTENT = """\
// Written by Tiebreak before a review: a test that passes wherever tests can run.
const test = require('node:test');

test('runs', () => {});
"""


@dataclass(frozen=True)
class Trivial:
    """One language's trivial test: its runner, its file's name (its path, for a test that
    needs a folder of its own), the folders it goes in when the project has one (else the
    root), and its content."""

    runner: str
    name: str
    folders: tuple[str, ...]
    content: str


PYTHON_TEST = Trivial("Python", NAME, FOLDERS, CONTENT)
GO_TEST = Trivial("go test", "tiebreakenvironment/tiebreak_environment_test.go", (), GO_CONTENT)
NODE_TEST = Trivial(
    "node --test", "tiebreak-environment.test.cjs", ("test", "tests", "__tests__"), NODE_CONTENT
)


def trivial_for(command: str) -> Trivial | None:
    """The trivial test that checks `command`'s runner, or None: a command the pre-flight
    does not know."""
    try:
        words = [os.path.basename(word) for word in shlex.split(command)]
    except ValueError:
        return None
    if any(PYTHON.fullmatch(word) for word in words):
        return PYTHON_TEST
    if any(a == "go" and b == "test" for a, b in itertools.pairwise(words)):
        return GO_TEST
    if "node" in words and "--test" in words:
        return NODE_TEST
    return None


def applies(command: str) -> bool:
    """Whether the pre-flight checks `command`: it runs Python, `go test` or `node --test`."""
    return trivial_for(command) is not None


def unchecked(command: str) -> str | None:
    """What is said of a command the pre-flight does not check, or None."""
    if applies(command):
        return None
    return (
        f"`{command}` is not checked before the review (the pre-flight knows Python's runners, "
        f"go test and node --test): a runner that cannot start shows in the first test's run"
    )


def trivial_test(tree: Path, trivial: Trivial = PYTHON_TEST) -> Reproduction:
    """The trivial test, where it is written in `tree`: beside the project's tests."""
    for folder in trivial.folders:
        path = tree / folder
        if path.is_dir() and not path.is_symlink():
            return Reproduction(path=f"{folder}/{trivial.name}", content=trivial.content)
    return Reproduction(path=trivial.name, content=trivial.content)


def problem(run: Run, command: str, python: str) -> str | None:
    """Why the trivial test's `run` (of `command`, with `python`: the project's Python, or the
    toolchain that runs it) says the environment cannot run tests, in one line, what the test
    printed of it first; None when it passed."""
    if run.passed:
        return None
    how = run.error or f"exited with {run.exit_code}"
    said = f"`{command}`, with {python}, {how} on a test that passes"
    line = telling_line(run.output_tail)
    if any(mark in line for mark in GO_RESERVATION):
        line = f"{line}: {GO_RESERVATION_HINT}"
    return f"{line} ({said})" if line else said


def telling_line(output: str) -> str:
    """The line of `output` that says best why a test could not run (empty: none)."""
    lines = [_ASSERTION.sub("", line).strip() for line in output.splitlines()]
    lines = [line for line in lines if line and not _SUMMARY.fullmatch(line)]
    if lines and _GO_REGISTER.fullmatch(lines[-1]):
        # A Go program that died of a signal (the go tool, its compiler): its stacks' frames
        # name functions, not why; the signal's line says it, where it was kept.
        signal = next((line for line in lines if _GO_SIGNAL.fullmatch(line)), None)
        fatal = next((line for line in lines if line.startswith(("fatal error: ", _GO_CGO))), None)
        return (fatal or signal or GO_CRASH)[:MAX_LINE]
    for mark in TELLING:
        found = [line for line in lines if mark in line]
        if found:
            return found[-1][:MAX_LINE]
    return lines[-1][:MAX_LINE] if lines else ""
