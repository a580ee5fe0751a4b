"""A scripted :class:`agents.verification.Verifier` for the engine's tests: what each test
shows is given by the test's path, what a patch does by its replacement text. The real one,
running tests in a sandbox, is tested in `tests/app/verification`."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.protocol import Patch, Reproduction
from agents.verification import Evidence, FixCheck, Run, Verification

COMMAND = "python -m pytest -x -q {test}"


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
    ran: list[str] = field(default_factory=list)
    checked: list[tuple[str, str]] = field(default_factory=list)

    @property
    def command(self) -> str:
        return COMMAND

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        self.ran.append(reproduction.path)
        head, base = _runs(self.shows[reproduction.path])
        return Verification.of(reproduction.path, COMMAND, head, base)

    async def check_fix(self, reproduction: Reproduction, patches: Sequence[Patch]) -> FixCheck:
        (patch,) = patches
        self.checked.append((reproduction.path, patch.replacement))
        passes = self.fixes.get(patch.replacement, False)
        return FixCheck.of(Run(exit_code=0 if passes else 1, output_tail="1 failed", seconds=0.5))


def _runs(evidence: Evidence) -> tuple[Run, Run | None]:
    failed = Run(exit_code=1, output_tail="AssertionError: 3 != 2\n1 failed", seconds=1.0)
    passed = Run(exit_code=0, output_tail="1 passed", seconds=1.0)
    broken = Run(exit_code=2, output_tail="SyntaxError: invalid syntax", seconds=0.2)
    return {
        Evidence.REPRODUCED: (failed, passed),
        Evidence.FAILS_AT_BASE: (failed, failed),
        Evidence.NOT_REPRODUCED: (passed, None),
        Evidence.BROKEN: (broken, None),
    }[evidence]
