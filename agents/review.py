"""A whole review: the debates over every unit of a diff, run concurrently, and their totals.

The units share one :class:`TokenCeiling`, so the review as a whole never passes the
policy's ceiling however many units it has.
"""

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, computed_field

from agents.context.reading import Reading
from agents.coverage import CostEstimate
from agents.debate.engine import Debate
from agents.debate.proofs import Proving
from agents.diff import DEFAULT_UNIT_TOKENS, Diff, ReviewUnit
from agents.errors import LLMFatal
from agents.models.llm import LLMClient, Role, Usage
from agents.outcome import FindingOutcome, Outcome, Resolution, StopReason
from agents.protocol import Severity
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig

_NOT_REVIEWED = frozenset({StopReason.SEED_FAILED, StopReason.FAILED})

BINARY = "a binary file: no lines to review"
"""Why a binary file of the diff is not reviewed."""


class Unreviewed(BaseModel):
    """A file of the diff that a unit not reviewed holds, and why it was not."""

    model_config = ConfigDict(frozen=True)

    path: str
    reason: str
    unit: str | None
    """The unit not reviewed that holds the file (the first, for a file cut in several);
    None for a file no unit holds (a binary file)."""
    in_part: bool = False
    """Whether other parts of the file, in other units, were reviewed."""


class Review(BaseModel):
    """The outcome of reviewing one diff: one :class:`Outcome` per review unit."""

    units: list[Outcome]
    estimate: CostEstimate | None = None
    """What the review was expected to cost before its first call, when it was made."""

    @property
    def findings(self) -> list[FindingOutcome]:
        return [f for unit in self.units for f in unit.findings]

    @property
    def unresolved(self) -> list[FindingOutcome]:
        return [f for unit in self.units for f in unit.unresolved]

    @property
    def failed_units(self) -> list[Outcome]:
        """Units that were not reviewed: the tester never reported, or every attempt at the
        unit's debate failed."""
        return [u for u in self.units if u.stop in _NOT_REVIEWED]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unreviewed(self) -> list[Unreviewed]:
        """Every file of the units not reviewed, once, in the order the units came; then
        the diff's binary files, which no unit holds."""
        reviewed = {p for u in self.units if u.stop not in _NOT_REVIEWED for p in u.paths}
        named: dict[str, Unreviewed] = {}
        for unit in self.failed_units:
            reason = unit.error or f"unit {unit.unit_id} was not reviewed ({unit.stop})"
            for path in unit.paths:
                named.setdefault(
                    path,
                    Unreviewed(
                        path=path, reason=reason, unit=unit.unit_id, in_part=path in reviewed
                    ),
                )
        binary = self.estimate.binary if self.estimate else ()
        for path in binary:
            named.setdefault(path, Unreviewed(path=path, reason=BINARY, unit=None))
        return list(named.values())

    @property
    def settled(self) -> bool:
        """Whether every unit was reviewed and no finding is left open (a binary file,
        which no unit holds, is named as not reviewed but unsettles nothing: no review
        could have read it)."""
        return not self.unresolved and not self.failed_units

    @property
    def suggested_fixes(self) -> list[FindingOutcome]:
        return [f for f in self.findings if f.resolution is Resolution.FIXED]

    @property
    def debated(self) -> list[Outcome]:
        """The units this review debated itself; the counts below are theirs alone (a unit
        carried forward from an earlier review was paid for by that review)."""
        return [u for u in self.units if u.carried_from is None]

    @property
    def rounds(self) -> int:
        return max((u.rounds for u in self.debated), default=0)

    @property
    def calls(self) -> int:
        return sum(u.calls for u in self.debated)

    @property
    def failed_turns(self) -> int:
        return sum(u.failed_turns for u in self.debated)

    @property
    def partial_turns(self) -> int:
        return sum(u.partial_turns for u in self.debated)

    def failures(self) -> str:
        """The turns that failed, as a summary says them: `2 failed`, or `2 failed, 1 partly
        refused` when Tiebreak refused part of a turn's answer and adopted the rest."""
        partly = f", {self.partial_turns} partly refused" if self.partial_turns else ""
        return f"{self.failed_turns} failed{partly}"

    @property
    def usage(self) -> Usage:
        return sum((u.usage for u in self.debated), Usage())

    @property
    def billed(self) -> int:
        """Billed tokens as the ceiling and the progress count them: each call's, added up."""
        return sum(u.billed for u in self.debated)

    def billed_by_role(self) -> dict[Role, int]:
        totals: dict[Role, int] = {}
        for unit in self.debated:
            for role, billed in unit.billed_by_role().items():
                totals[role] = totals.get(role, 0) + billed
        return totals

    @property
    def verification_seconds(self) -> float:
        """Seconds the findings' tests ran, over the units."""
        return sum(u.verification_seconds for u in self.units)

    @property
    def test_tokens(self) -> int:
        """About how many output tokens the testers spent writing tests."""
        return sum(u.test_tokens for u in self.units)

    def at_least(self, severity: Severity) -> "Review":
        """The review without its findings less severe than `severity`."""
        units = [
            unit.model_copy(
                update={
                    "findings": [
                        f for f in unit.findings if f.finding.severity.rank <= severity.rank
                    ]
                }
            )
            for unit in self.units
        ]
        return self.model_copy(update={"units": units})

    def usage_by_role(self) -> dict[Role, Usage]:
        totals: dict[Role, Usage] = {}
        for unit in self.debated:
            for role, usage in unit.usage_by_role.items():
                totals[role] = totals.get(role, Usage()) + usage
        return totals


async def review_diff(
    diff: Diff,
    llm: LLMClient,
    policy: DebatePolicy | None = None,
    *,
    concurrency: int = 4,
    unit_tokens: int = DEFAULT_UNIT_TOKENS,
    ceiling: TokenCeiling | None = None,
    debate: bool = True,
    reading: Reading | None = None,
    proving: Proving | None = None,
) -> Review:
    """Debate every review unit of `diff`, at most `concurrency` at a time.

    `ceiling` defaults to the policy's own; pass one to share an allowance or to read what
    the review spent even if it is cancelled. An :class:`agents.errors.LLMFatal` from any
    unit cancels the others and propagates. With `debate` off, each unit gets the testers'
    reports alone (:meth:`Debate.report`). `reading` is what the agents read beside each
    unit's diff: the code around it and the repository's guidance (none by default).
    `proving` runs the findings' tests (none by default).
    """
    units = (reading or Reading()).attach(diff.units(unit_tokens))
    return await review_units(
        units, llm, policy, concurrency=concurrency, ceiling=ceiling, debate=debate, proving=proving
    )


async def review_units(
    units: Sequence[ReviewUnit],
    llm: LLMClient,
    policy: DebatePolicy | None = None,
    *,
    concurrency: int = 4,
    ceiling: TokenCeiling | None = None,
    debate: bool = True,
    proving: Proving | None = None,
    summary: SummaryConfig | None = None,
) -> Review:
    """Debate `units` as :func:`review_diff` does, started in their order: when the ceiling
    cannot cover them all, the first ones (the riskiest, as a diff orders them) get it. With
    a `summary`, each debated unit is described for the walkthrough too."""
    engine = Debate(llm, policy, ceiling=ceiling, proving=proving, summary=summary)
    slots = asyncio.Semaphore(concurrency)

    async def run(unit: ReviewUnit) -> Outcome:
        async with slots:
            return await (engine.run(unit) if debate else engine.report(unit))

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run(unit)) for unit in units]
    except ExceptionGroup as errors:
        # A fatal model error (bad key, no credit) is the review's answer, not a bug.
        fatal = next((e for e in errors.exceptions if isinstance(e, LLMFatal)), None)
        if fatal is not None:
            raise fatal from None
        raise
    return Review(units=[t.result() for t in tasks])
