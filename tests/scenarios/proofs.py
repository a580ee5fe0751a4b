"""A scripted :class:`agents.verification.Verifier` for the engine's tests: what each test
shows is given by the test's path, what a patch does by its replacement text; and what
pytest prints when a test fails, or when its file cannot be collected, for the runs it
answers with. The real one, running tests in a sandbox, is tested in
`tests/app/verification`."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.protocol import Patch, Reproduction
from agents.verification import Evidence, FixCheck, OwnTestRun, Run, Verification

COMMAND = "python -m pytest -x -q {test}"
ADDED = "shares"
"""A name the payments change (`tests.scenarios.debates`) defines on an added line."""
RULE = "=" * 30


def pytest_failed(test: str, exception: str, message: str, line: int = 5) -> str:
    """What `pytest -q` prints of `test` failing at its `line` with `exception`."""
    return (
        f"F [100%]\n{RULE} FAILURES {RULE}\n{'_' * 30} test_it {'_' * 30}\n\n"
        f"    def test_it():\n>       check()\nE       {exception}: {message}\n\n"
        f"{test}:{line}: {exception}\n{RULE} short test summary info {RULE}\n"
        f"FAILED {test}::test_it - {exception}: {message}\n1 failed in 0.05s\n"
    )


def pytest_uncollected(test: str, exception: str, message: str) -> str:
    """What `pytest -q` prints when `test` cannot be imported (it exits with 2)."""
    return (
        f"\n{RULE} ERRORS {RULE}\n{'_' * 20} ERROR collecting {test} {'_' * 20}\n"
        f"ImportError while importing test module '/work/{test}'.\nTraceback:\n"
        f"{test}:1: in <module>\n    from app.payments import {ADDED}\n"
        f"E   {exception}: {message}\n{RULE} short test summary info {RULE}\n"
        f"ERROR {test}\n!!!! Interrupted: 1 error during collection !!!!\n1 error in 0.05s\n"
    )


def reproduction(
    path: str = "tests/test_payments.py", body: str = "assert False"
) -> dict[str, Any]:
    """A reproduction as a tester writes it into a finding or an evaluation."""
    return {"path": path, "content": f"def test_it():\n    {body}\n"}


@dataclass
class ScriptedVerifier:
    """Answers each test by its path, each patch by its replacement, and keeps what it ran."""

    shows: Mapping[str, Evidence]
    fixes: Mapping[str, bool] = field(default_factory=dict)
    """Whether a patch's replacement makes the test pass (absent: it does not)."""
    own: Mapping[str, bool] = field(default_factory=dict)
    """Whether each of the pull request's own tests passes at the head (absent: it does)."""
    ran: list[str] = field(default_factory=list)
    checked: list[tuple[str, str]] = field(default_factory=list)
    ran_own: list[str] = field(default_factory=list)

    @property
    def command(self) -> str:
        return COMMAND

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        self.ran.append(reproduction.path)
        head, base = runs_showing(reproduction.path, self.shows[reproduction.path])
        return Verification.of(reproduction.path, COMMAND, head, base)

    async def check_fix(self, reproduction: Reproduction, patches: Sequence[Patch]) -> FixCheck:
        (patch,) = patches
        self.checked.append((reproduction.path, patch.replacement))
        passes = self.fixes.get(patch.replacement, False)
        ran = Run(exit_code=0 if passes else 1, output_tail="1 failed", seconds=0.5)
        return FixCheck.of(reproduction.path, ran)

    async def run_own(self, test: str) -> OwnTestRun:
        self.ran_own.append(test)
        passes = self.own.get(test, True)
        output = "1 passed in 0.05s" if passes else pytest_failed(test, "AssertionError", "1 != 2")
        return OwnTestRun.of(test, Run(exit_code=0 if passes else 1, output_tail=output))


def runs_showing(test: str, evidence: Evidence) -> tuple[Run, Run | None]:
    """Runs of `test` at the head and the base (None: not run) that show `evidence`, once
    judged on the payments change."""
    failed = Run(
        exit_code=1, output_tail=pytest_failed(test, "AssertionError", "3 != 2"), seconds=1.0
    )
    passed = Run(exit_code=0, output_tail="1 passed in 0.05s", seconds=1.0)
    broken = Run(exit_code=2, output_tail="SyntaxError: invalid syntax", seconds=0.2)
    lacking = Run(
        exit_code=2,
        output_tail=pytest_uncollected(
            test, "ImportError", f"cannot import name '{ADDED}' from 'app.payments'"
        ),
        seconds=0.5,
    )
    return {
        Evidence.REPRODUCED: (failed, passed),
        Evidence.INTRODUCED: (failed, lacking),
        Evidence.FAILS_AT_BASE: (failed, failed),
        Evidence.NOT_REPRODUCED: (passed, None),
        Evidence.BROKEN: (broken, None),
    }[evidence]
