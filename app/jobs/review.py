"""The review job: one pull request head, from check run to published review.

    pull request, config (base branch only) → does this event get a review? →
    check run (in progress) → daily allowance → diff, in-scope files →
    the debates, and the proven findings' tests run again → review, label →
    check run completed

An automatic review the config does not want (that event, that author, a draft) ends
quietly, before any check run. A newer push supersedes the job: it stops before publishing
and completes its check run as superseded, as does a run picked up from a coordinator that
died, superseded meanwhile, which ends there; whether a push is newer is GitHub's to say
(:mod:`app.review.superseding`). It publishes holding the pull request's landing lock, so a
reply or a command changing the earlier run lands wholly before it or not at all. Whatever
goes wrong, the check run is completed with a clear message: this job is one of the two
places allowed to catch everything.
"""

import asyncio
import logging
from contextlib import AbstractAsyncContextManager
from typing import Any

from agents.diff import Diff
from agents.review import Review
from app.events import PullRequestRef, QueuedRef
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.job_results import JobResult
from app.publishing.publication import RunRecord, UnitReading
from app.review import check_run, finishing, planning, superseding
from app.review.failures import logged_reason
from app.review.fanout import Fanout
from app.review.following import Following
from app.review.run_context import RunContext, RunStart
from app.review.together import dropped
from app.store.plans import RunPlan, readings_of
from app.store.pulls import StoredRun
from app.store.records import ENDED, State
from app.telemetry.logs import log_context
from policies.config import Trigger

log = logging.getLogger(__name__)


async def review_pull_request(
    ctx: dict[str, Any],
    ref_data: dict[str, Any],
    trigger: str | None = None,
    run_id: str | None = None,
) -> JobResult:
    """arq's entry point: review one pull request head.

    `trigger` is the pull request event behind an automatic review; None when a person asked.
    `run_id` names a run whose coordinator died, to pick up; a new run takes the job's id.
    """
    queued = QueuedRef.model_validate(ref_data)
    run = run_id or str(ctx["job_id"])
    review = ReviewRun(deps_of(ctx), queued.ref, run, trigger, base_sha=queued.base_sha)
    return await review.run()


class ReviewRun:
    """One review run, from its start (:mod:`app.review.planning`) through the fleet's
    debates (:mod:`app.review.fanout`) to what it publishes (:mod:`app.review.finishing`), its
    check run (:mod:`app.review.check_run`) completed whatever happens."""

    def __init__(
        self,
        deps: WorkerDeps,
        ref: PullRequestRef,
        run_id: str,
        trigger: str | None = None,
        *,
        base_sha: str | None = None,
    ) -> None:
        self.deps = deps
        self.ref = ref
        self.run_id = run_id
        self.trigger = trigger
        self.base_sha = base_sha
        """The pull request's base commit as the event that queued the run named it."""
        self.units = 0
        self.fanout: Fanout | None = None
        """The run's units spread over the fleet, once they are."""
        self.live = deps.live_runs()
        github = deps.github.installation(ref.installation_id)
        self.context = RunStart(deps=deps, github=github, ref=ref, run_id=run_id)
        """What the run knows so far, each step's answer in turn: its check run is completed
        from it whatever happens."""

    async def run(self) -> JobResult:
        ref = self.ref
        with log_context(run_id=self.run_id, repository=ref.full_name, pull_number=ref.number):
            live = self.live
            superseded = await superseding.before_start(self.context)
            status = await live.run_status(self.run_id)
            if superseded and status is None:  # nothing of it to end: no check run, no live run
                return JobResult.completed("superseded before it started")
            if await self._reviewed_before_ready():
                return JobResult.completed("not reviewed: its head was reviewed already")
            if status is not None and status.state in ENDED:
                return JobResult.completed("this run has ended already")
            if await live.run_alive(self.run_id):
                return JobResult.completed("this run is live on another worker")
            if status is not None and status.check_run is not None:
                # A shutdown cut the run short after it opened its check run: that one is
                # completed, whatever step the run starts again from.
                self.context = self.context.with_check_run(status.check_run)
            async with live.beating_run(self.run_id):
                await live.open(self.run_id, ref, self.trigger)
                return await self._run(superseded=superseded)

    async def _run(self, *, superseded: bool) -> JobResult:
        """Start the run, or pick it up where a coordinator that died left it; end it, and
        its check run, if a newer push `superseded` it meanwhile."""
        ended: State | None = State.FAILED
        try:
            planned = await self.live.plan(self.run_id)
            if planned is not None:  # picked up from a coordinator that died or was shut down
                plan, diff = planned
                context = self._resume(plan)
                if superseded:
                    result = await self._end_superseded(context, plan)
                else:
                    result = await self._coordinate(context, plan, diff)
            elif superseded:  # its coordinator stopped before its plan
                if isinstance(self.context, RunContext):  # after it opened its check run
                    await check_run.complete_superseded(self.context)
                result = "superseded before it started"
            else:
                result = await self._start()
            ended = State.COMPLETE
            return JobResult.completed(result)
        except asyncio.CancelledError:
            # Stopped by a person or superseded by a push, the run ends; cancelled by a
            # shutdown, it stays live whatever step it was at: arq runs its job again (or the
            # janitor queues another), which picks it up.
            if not await asyncio.shield(self._stopped()):
                ended = None
            raise
        except Exception as exc:
            # The job's catch-all: whatever failed, the pull request gets a clear answer.
            log.exception("review of %s failed", self.ref.key)
            await asyncio.shield(self._stop_units())
            await check_run.report_failure(self.context, exc)
            return JobResult.failed(logged_reason(exc))
        finally:
            if ended is not None:
                await asyncio.shield(self.live.finish(self.run_id, ended, self.units))

    async def _stopped(self) -> bool:
        """Whether the job arq cancelled was stopped by a person or superseded by a newer
        push, rather than by a shutdown: its units are then stopped, and its check run, if it
        is open, completed as stopped or superseded."""
        result = await check_run.cancelling(self.context)
        if result is None:
            return False
        await self._stop_units()
        if isinstance(self.context, RunContext):
            await check_run.complete(self.context, result)
        return True

    async def _stop_units(self) -> None:
        """Failed, stopped or superseded: the units still queued or running are not needed
        (a shutdown leaves them to run, for the run's next coordinator)."""
        if self.fanout is not None:
            await self.fanout.stop()

    async def _start(self) -> str:
        pull, self.context, diffing = await planning.configured(self.context, self.base_sha)
        quiet = planning.declined(self.context, pull, self.trigger)
        if quiet is not None:  # before any check run
            await dropped(diffing)
            return f"not reviewed: {quiet}"
        context, reading = await planning.opened(self.context, pull, diffing)
        self.context = context
        planned = await planning.plan(context, pull, reading)
        if isinstance(planned, str):  # ended before a plan, its check run completed
            return planned
        plan, diff, units = planned
        self.units = plan.units
        await self.live.begin(plan, diff, units)
        return await self._coordinate(context, plan, diff, fresh=True, readings=readings_of(units))

    def _resume(self, plan: RunPlan) -> RunContext:
        self.context = context = planning.picked_up(self.context, plan)
        self.units = plan.units
        log.warning("picking up run %s of %s where its worker left it", self.run_id, self.ref.key)
        return context

    async def _end_superseded(self, context: RunContext, plan: RunPlan) -> str:
        """End a run picked up after a newer push: the units its coordinator left stopped, its
        check run completed as superseded (and the run finished, as any run that returns)."""
        attempts = self.deps.max_unit_attempts
        await Fanout(self.live, self.deps.queue, plan, max_attempts=attempts).stop()
        await check_run.complete_superseded(context)
        return "superseded before it was picked up"

    async def _coordinate(
        self,
        context: RunContext,
        plan: RunPlan,
        diff: Diff,
        *,
        fresh: bool = False,
        readings: dict[str, UnitReading] | None = None,
    ) -> str:
        """Have the fleet debate the plan's units; publish what they found, once. `diff` is
        the part of the pull request's diff the run covers; `fresh`, not a dead one's run;
        `readings`, what its units read beside their diffs, if this run planned them."""
        queue = self.deps.queue
        attempts = self.deps.max_unit_attempts
        self.fanout = fanout = Fanout(self.live, queue, plan, max_attempts=attempts, fresh=fresh)
        # The units first: they debate while the rest is set up.
        await fanout.start()
        # The proven findings of the pull request's latest run, their tests run again at this
        # head beside the units' debates.
        following = Following(context, self.live, plan, await self._latest())
        await following.start()
        debated = Review(units=await fanout.outcomes(), estimate=plan.estimate)
        follow_ups = await following.follow_ups()
        # Landed under the pull request's landing lock: after the replies and commands that
        # changed the earlier run, before those that will read this one.
        async with self._landing() as latest:
            if (newer := await superseding.newer_head(context)) is not None:
                await check_run.complete_superseded(context, newer)
                return "superseded before publishing"
            earlier = latest.record if latest and latest.record.run_id != self.run_id else None
            return await finishing.publish(
                context,
                self.live,
                plan,
                debated,
                diff,
                earlier,
                follow_ups,
                fresh=fresh,
                readings=readings,
            )

    async def _reviewed_before_ready(self) -> bool:
        """Whether this is the review of a draft marked ready whose head was reviewed before
        (it was ready then, turned into a draft and back): its head's own job did the work."""
        if self.trigger != Trigger.READY_FOR_REVIEW:
            return False
        latest = await self.deps.pulls.latest(self.ref)
        return latest is not None and latest.ref.head_sha == self.ref.head_sha

    async def _latest(self) -> RunRecord | None:
        """The pull request's latest run other than this one."""
        latest = await self.deps.pulls.latest(self.ref)
        return latest if latest is not None and latest.run_id != self.run_id else None

    def _landing(self) -> AbstractAsyncContextManager[StoredRun | None]:
        return self.deps.pulls.landing(self.ref)
