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

The trivial test is Python's: it is written when the command runs Python (`python`,
`python3.12`, `pytest` or `py.test` among its words). Another command is not checked before
the review; a runner that cannot start shows in its first test's run, `broken`.
"""

import os
import re
import shlex
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


def applies(command: str) -> bool:
    """Whether the pre-flight checks `command`: it runs Python."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return any(PYTHON.fullmatch(os.path.basename(word)) for word in words)


def trivial_test(tree: Path) -> Reproduction:
    """The trivial test, where it is written in `tree`: beside the project's tests."""
    for folder in FOLDERS:
        path = tree / folder
        if path.is_dir() and not path.is_symlink():
            return Reproduction(path=f"{folder}/{NAME}", content=CONTENT)
    return Reproduction(path=NAME, content=CONTENT)


def problem(run: Run, command: str, python: str) -> str | None:
    """Why the trivial test's `run` (of `command`, on `python`) says the environment cannot
    run tests, in one line, what the test printed of it first; None when it passed."""
    if run.passed:
        return None
    how = run.error or f"exited with {run.exit_code}"
    said = f"`{command}`, with {python}, {how} on a test that passes"
    line = telling_line(run.output_tail)
    return f"{line} ({said})" if line else said


def telling_line(output: str) -> str:
    """The line of `output` that says best why a test could not run (empty: none)."""
    lines = [_ASSERTION.sub("", line).strip() for line in output.splitlines()]
    lines = [line for line in lines if line and not _SUMMARY.fullmatch(line)]
    for mark in TELLING:
        found = [line for line in lines if mark in line]
        if found:
            return found[-1][:MAX_LINE]
    return lines[-1][:MAX_LINE] if lines else ""
