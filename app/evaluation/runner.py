"""The runner: every configuration of Tiebreak on every case, on one model.

Each configuration reviews a case's diff as `tiebreak review` would (`agents.review`), the
code around each change read from the case's `files` unless context is off:
`single` and `vote` take the testers' reports without a debate, `trio` and `panel` debate.
With a budget, every configuration's billed tokens on a case are capped at the same figure:
a comparison at equal cost. A configuration whose calls fail on a case is recorded as failed
there, and the run goes on.
"""

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agents.context import Reading
from agents.diff import Diff
from agents.errors import DebateError
from agents.llm import LLMClient
from agents.outcome import Resolution
from agents.protocol import Finding
from agents.review import Review, review_diff
from app.evaluation.cases import Case
from app.evaluation.results import CaseRun, Config, Posted
from app.evaluation.store import ResultStore
from app.evaluation.voting import majority
from app.parsing import Parsing
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy

VOTERS = 3
PANEL_TESTERS = 3

_POLICIES = {
    Config.SINGLE: DebatePolicy(),
    Config.VOTE: DebatePolicy(),
    Config.TRIO: DebatePolicy(),
    Config.PANEL: DebatePolicy(testers=PANEL_TESTERS),
}


@dataclass(frozen=True)
class Runner:
    """How the cases are run: the model, the equal-cost budget, where results are kept."""

    llm: LLMClient
    budget: int | None = None
    """Billed tokens per case and configuration; None for each configuration's own ceiling."""
    store: ResultStore | None = None
    jobs: int = 1
    """Cases run at once."""
    clock: Callable[[], float] = field(default=time.monotonic)
    context: bool = True
    """Whether the agents read the code around each change, from the case's `files`."""
    parsing: Parsing | None = None
    """Where the case's files are parsed, each within a budget; None parses them here."""

    async def run(
        self,
        cases: Sequence[Case],
        configs: Sequence[Config],
        on_result: Callable[[CaseRun], None] = lambda run: None,
    ) -> list[CaseRun]:
        """Every configuration on every case, `jobs` cases at a time; results stored as they
        finish (and taken from the store when already there). `on_result` hears each one."""
        slots = asyncio.Semaphore(self.jobs)

        async def case_runs(case: Case) -> list[CaseRun]:
            async with slots:
                runs = []
                for config in configs:
                    stored = self.store.finished(case.id, config) if self.store else None
                    run = stored or await self.run_case(case, config)
                    if self.store and stored is None:
                        self.store.save(run)
                    on_result(run)
                    runs.append(run)
                return runs

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(case_runs(case)) for case in cases]
        return [run for task in tasks for run in task.result()]

    async def run_case(self, case: Case, config: Config) -> CaseRun:
        """`config` on `case`: what it posted and what it cost, or why it failed."""
        policy = _POLICIES[config]
        ceiling = TokenCeiling(self.budget or policy.token_ceiling)
        started = self.clock()
        reviews: list[Review] = []
        error: str | None = None
        try:
            diff = Diff.parse(case.diff)
            reading = await self._reading(case)
            rounds = VOTERS if config is Config.VOTE else 1
            debate = config in (Config.TRIO, Config.PANEL)
            for _ in range(rounds):
                review = await review_diff(
                    diff,
                    self.llm,
                    policy,
                    ceiling=ceiling,
                    debate=debate,
                    reading=reading,
                )
                reviews.append(review)
                if review.failed_units:
                    unit = review.failed_units[0]
                    error = unit.error or f"unit {unit.unit_id} was not reviewed ({unit.stop})"
                    break
        except DebateError as exc:
            error = str(exc) or type(exc).__name__
        seconds = self.clock() - started
        calls = sum(r.calls for r in reviews)
        return CaseRun(
            case_id=case.id,
            config=config,
            posted=() if error is not None else _posted(config, reviews),
            billed_tokens=ceiling.spent,
            calls=calls,
            seconds=seconds,
            error=error,
        )

    async def _reading(self, case: Case) -> Reading | None:
        if not self.context:
            return None
        outlines = await self.parsing.outlines(case.files) if self.parsing else {}
        return Reading(case.files, outlines=outlines)


def _posted(config: Config, reviews: Sequence[Review]) -> tuple[Posted, ...]:
    """What the configuration would post: every reported finding for `single`, the majority's
    for `vote`, everything but withdrawn findings for a debate (as a review posts)."""
    reports = [
        [f.finding for f in r.findings if f.resolution is not Resolution.WITHDRAWN] for r in reviews
    ]
    findings: Sequence[Finding] = majority(reports) if config is Config.VOTE else reports[0]
    return tuple(
        Posted(
            path=f.path,
            start_line=f.start_line,
            end_line=f.end_line,
            severity=f.severity,
            claim=f.claim,
        )
        for f in findings
    )
