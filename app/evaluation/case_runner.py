"""The runner: every configuration of Tiebreak on every case, on one model.

Each configuration reviews a case's diff as `tiebreak review` would (`agents.review`), the
code around each change read from the case's `files` unless context is off (and, where the
case is checked out, what the repository's other files tell about it, searched in the
parsing processes: `Parsing.related`):
`single` and `vote` take the testers' reports without a debate, `trio` and `panel` debate.
With a budget, every configuration's billed tokens on a case are capped at the same figure:
a comparison at equal cost. A configuration whose calls fail on a case is recorded as failed
there, and the run goes on.

With checkouts (`Verifying`), each case is checked out once for all its configurations; with
verification, each review of it (each of `vote`'s three reports too) runs its findings' tests with
runs and seconds of its own; every posted finding carries what its test showed.
"""

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from agents.context.reading import Reading
from agents.debate.proofs import Proving
from agents.diff import Diff
from agents.errors import DebateError
from agents.models.llm import LLMClient
from agents.outcome import FindingOutcome, Resolution
from agents.review import Review, review_diff
from agents.verification import Evidence
from app.evaluation.cases import Case
from app.evaluation.checkouts import CaseCheckout, Verifying
from app.evaluation.result_files import ResultFiles
from app.evaluation.results import CaseRun, Config, Posted
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


def spend_cap(config: Config, budget: int | None) -> int:
    """The billed tokens `config` may spend on a case: `budget`, or its review's own ceiling."""
    return budget or _POLICIES[config].token_ceiling


def stored_run(
    files: ResultFiles | None, case: Case, config: Config, *, verify: bool
) -> CaseRun | None:
    """The stored result of `config` on `case`, which a run takes instead of running it
    again, unless tests are asked for now (`verify`) and were not then (a result with tests
    serves a run without)."""
    stored = files.finished(case.id, config) if files else None
    if stored is None or (verify and not stored.verify):
        return None
    return stored


@dataclass(frozen=True)
class CaseRunner:
    """How the cases are run: the model, the equal-cost budget, where results are kept."""

    llm: LLMClient
    budget: int | None = None
    """Billed tokens per case and configuration; None for each configuration's own ceiling."""
    result_files: ResultFiles | None = None
    jobs: int = 1
    """Cases run at once."""
    clock: Callable[[], float] = field(default=time.monotonic)
    context: bool = True
    """Whether the agents read the code around each change, from the case's `files`."""
    parsing: Parsing | None = None
    """Where the case's files are parsed, each within a budget; None parses them here."""
    verifying: Verifying | None = None
    """How the findings' tests run; None runs none."""

    async def run(
        self,
        cases: Sequence[Case],
        configs: Sequence[Config],
        on_result: Callable[[CaseRun], None] = lambda run: None,
    ) -> list[CaseRun]:
        """Every configuration on every case, `jobs` cases at a time; results stored as they
        finish (and taken from the result files when already there). `on_result` hears each one."""
        slots = asyncio.Semaphore(self.jobs)

        async def case_runs(case: Case) -> list[CaseRun]:
            async with slots:
                stored = {config: self._stored(case, config) for config in configs}
                runs = []
                needed = any(run is None for run in stored.values())
                async with self._checkout(case, needed) as checkout:
                    for config in configs:
                        run = stored[config] or await self.run_case(case, config, checkout)
                        if self.result_files and stored[config] is None:
                            self.result_files.save(run)
                        on_result(run)
                        runs.append(run)
                return runs

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(case_runs(case)) for case in cases]
        return [run for task in tasks for run in task.result()]

    def _stored(self, case: Case, config: Config) -> CaseRun | None:
        return stored_run(self.result_files, case, config, verify=self.verifying is not None)

    @contextlib.asynccontextmanager
    async def _checkout(self, case: Case, needed: bool) -> AsyncIterator[CaseCheckout | None]:
        if self.verifying is None or not needed:
            yield None
            return
        async with self.verifying.checkout(case) as checkout:
            yield checkout

    async def run_case(
        self, case: Case, config: Config, checkout: CaseCheckout | None = None
    ) -> CaseRun:
        """`config` on `case`: what it posted and what it cost, or why it failed. With a
        `checkout`, the findings' tests run there."""
        policy = _POLICIES[config]
        ceiling = TokenCeiling(spend_cap(config, self.budget))
        started = self.clock()
        reviews: list[Review] = []
        error: str | None = None
        try:
            diff = Diff.parse(case.diff)
            reading = await self._reading(case, diff, checkout)
            rounds = VOTERS if config is Config.VOTE else 1
            debate = config in (Config.TRIO, Config.PANEL)
            for _ in range(rounds):
                async with _proving(checkout, diff) as proving:
                    review = await review_diff(
                        diff,
                        self.llm,
                        policy,
                        ceiling=ceiling,
                        debate=debate,
                        reading=reading,
                        proving=proving,
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
        tested = checkout is not None and checkout.tests
        unverified = checkout.unverified if checkout and checkout.tests else None
        return CaseRun(
            case_id=case.id,
            config=config,
            posted=() if error is not None else _posted(config, reviews, unverified),
            billed_tokens=ceiling.spent,
            calls=calls,
            seconds=seconds,
            error=error,
            verify=tested,
            unverified=unverified,
        )

    async def _reading(
        self, case: Case, diff: Diff, checkout: CaseCheckout | None
    ) -> Reading | None:
        if not self.context:
            return None
        outlines = await self.parsing.outlines(case.files) if self.parsing else {}
        # The case's worktree, at its introducing commit, is the diff's new side.
        tree = checkout.tree if checkout and checkout.unverified is None else None
        related = await self.parsing.related(tree, diff) if self.parsing and tree else None
        return Reading(case.files, outlines=outlines, related=related)


def _proving(
    checkout: CaseCheckout | None, diff: Diff
) -> contextlib.AbstractAsyncContextManager[Proving | None]:
    return checkout.proving(diff) if checkout else contextlib.nullcontext(None)


def _posted(
    config: Config, reviews: Sequence[Review], unverified: str | None
) -> tuple[Posted, ...]:
    """What the configuration would post: every reported finding for `single`, the majority's
    for `vote`, everything but withdrawn findings for a debate (as a review posts); each with
    what its test showed (`not_run` for all, with the reason, when the case's tests could
    not run)."""
    reports = [[f for f in r.findings if f.resolution is not Resolution.WITHDRAWN] for r in reviews]
    chosen: Sequence[FindingOutcome] = (
        majority(reports, key=lambda f: f.finding) if config is Config.VOTE else reports[0]
    )
    return tuple(_post(f, unverified) for f in chosen)


def _post(ended: FindingOutcome, unverified: str | None) -> Posted:
    finding, shown = ended.finding, ended.verification
    verdict, reason = (shown.verdict, shown.reason) if shown else (None, "")
    if unverified is not None:
        verdict, reason = Evidence.NOT_RUN, unverified
    return Posted(
        path=finding.path,
        start_line=finding.start_line,
        end_line=finding.end_line,
        severity=finding.severity,
        claim=finding.claim,
        verdict=verdict,
        verdict_reason=reason,
        fix_verified=ended.fix_verified,
        relevant=shown.relevant if shown else None,
        intended=ended.behaviour_change and unverified is None,
    )
