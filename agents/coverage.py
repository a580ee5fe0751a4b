"""What a review is expected to cost before its first call: its units, their files and tokens,
against the ceiling, and how many of the units the ceiling is expected to reach.

The figures are the ceiling's own estimates (:meth:`agents.models.llm.LLMRequest.estimated_tokens`):
a unit's first call per tester writes its whole prompt to the cache and may answer at the
longest allowed; each later call reads that prompt at a cache read's price and may answer as
long. A typical debate is taken to be the testers' reports and two rounds (the coder's answers
and each tester's evaluations), the debate of the example in docs/app.md. Generous by design, as a
reservation is: a review the estimate says fits is very likely to fit, and one it says does not
will be cut, riskiest units first (:mod:`policies.coverage`).
"""

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from agents.debate.briefs import unit_briefs
from agents.debate.prompts import SYSTEM, role_brief
from agents.diff import ReviewUnit
from agents.models.llm import CACHE_READ_PRICE, CACHE_WRITE_PRICE, LLMRequest, Role
from agents.protocol import TESTED_TOOLS, TOOLS, ToolName
from agents.wording import counted
from policies.debate import DebatePolicy

TYPICAL_ROUNDS = 2
"""Rounds of a typical debate, after the testers' reports."""


class UnitEstimate(BaseModel):
    """One unit's expected cost."""

    model_config = ConfigDict(frozen=True)

    unit: str
    files: int
    first_call: int
    """What the ceiling reserves for the unit's first call: it starts only if this is left."""
    tokens: int
    """Billed tokens of a typical debate of the unit, at the ceiling's estimates."""


class CostEstimate(BaseModel):
    """A review's expected cost against its ceiling, made before its first call."""

    model_config = ConfigDict(frozen=True)

    units: list[UnitEstimate]
    files: int
    """Files with something to review (a file cut in several units counts once)."""
    tokens: int
    ceiling: int
    binary: tuple[str, ...] = ()
    """The diff's binary files (:attr:`agents.diff.Diff.binaries`), which no unit holds: the
    review names them as not reviewed."""

    @property
    def covered(self) -> int:
        """The units, in the order they are reviewed, that the ceiling is expected to reach."""
        total = 0
        for n, unit in enumerate(self.units):
            total += unit.tokens
            if total > self.ceiling:
                return n
        return len(self.units)

    def describe(self) -> str:
        """One line for a person about to start the review."""
        files = counted(self.files + len(self.binary), "file")
        if self.binary:
            files += f" ({len(self.binary)} binary, not reviewed)"
        line = (
            f"{counted(len(self.units), 'unit')} of {files} · about "
            f"{self.tokens:,} billed tokens expected against a ceiling of {self.ceiling:,}"
        )
        covered = self.covered
        if covered == len(self.units):
            return line
        if covered == 0:
            reach = "it may not cover even the first unit, which holds the riskiest files"
        elif covered == 1:
            reach = "it may cover only the first unit, which holds the riskiest files"
        else:
            reach = f"it may cover only the first {covered} units, which hold the riskiest files"
        return f"{line}: {reach}; every file left is named at the end"


def estimate(
    units: Sequence[ReviewUnit],
    policy: DebatePolicy,
    *,
    tests: bool = False,
    binary: Sequence[str] = (),
) -> CostEstimate:
    """The expected cost of reviewing `units`, in order, under `policy`. `tests`: findings'
    tests are run (the tools then carry a reproduction field); `binary`: the diff's binary
    files, which no unit holds."""
    each = [_unit(unit, policy, tests) for unit in units]
    return CostEstimate(
        units=each,
        files=len({p for unit in units for p in unit.diff.paths}),
        tokens=sum(u.tokens for u in each),
        ceiling=policy.token_ceiling,
        binary=tuple(binary),
    )


def _unit(unit: ReviewUnit, policy: DebatePolicy, tests: bool) -> UnitEstimate:
    seed = LLMRequest(
        role=Role.TESTER,
        agent=str(Role.TESTER),
        tool=(TESTED_TOOLS if tests else TOOLS)[ToolName.REPORT_FINDINGS],
        system=SYSTEM,
        blocks=(*unit_briefs(unit), role_brief(Role.TESTER)),
        max_output_tokens=policy.max_output_tokens,
    )
    first = seed.estimated_tokens()
    prompt = first - policy.max_output_tokens
    later = math.ceil(prompt / CACHE_WRITE_PRICE * CACHE_READ_PRICE) + policy.max_output_tokens
    testers = policy.testers
    later_calls = TYPICAL_ROUNDS * (1 + testers)
    return UnitEstimate(
        unit=unit.id,
        files=len(unit.diff.files),
        first_call=first,
        tokens=testers * first + later_calls * later,
    )
