"""The review job: one pull request head, from check run to published review.

    pull request, config (base branch only) → does this event get a review? →
    check run (in progress) → daily allowance → diff, in-scope files →
    the debates → review, label → check run completed

An automatic review the config does not want (that event, that author, a draft) ends
quietly, before any check run. A newer push supersedes the job: it stops before publishing
and completes its check run as superseded; whether a push is newer is GitHub's to say
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
from app.events import PullRequestRef
from app.github.protocol import InstallationClient
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.results import JobResult
from app.review.check_run import ReviewCheck
from app.review.failures import logged_reason
from app.review.fanout import Fanout
from app.review.finishing import ReviewPublishing
from app.review.planning import ReviewPlanning
from app.review.superseding import Superseding
from app.store.plans import RunPlan
from app.store.pulls import StoredRun
from app.store.records import ENDED, State
from app.telemetry.logs import log_context
from policies.config_file import ConfigProblem

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
    ref = PullRequestRef.model_validate(ref_data)
    run = run_id or str(ctx["job_id"])
    return await ReviewRun(deps_of(ctx), ref, run_id=run, trigger=trigger).run()


class ReviewRun:
    """One review run, from its start (:mod:`app.review.planning`) through the fleet's
    debates (:mod:`app.review.fanout`) to what it publishes
    (:mod:`app.review.finishing`), its check run (:mod:`app.review.check_run`)
    completed whatever happens."""

    def __init__(
        self, deps: WorkerDeps, ref: PullRequestRef, run_id: str, trigger: str | None = None
    ) -> None:
        self.deps = deps
        self.ref = ref
        self.run_id = run_id
        self.trigger = trigger
        self.units = 0
        self.github: InstallationClient = deps.github.installation(ref.installation_id)
        self.live = deps.live_runs()
        self.heads = Superseding(deps, self.github, ref, run_id)
        self.check = ReviewCheck(deps, self.github, ref, run_id, self.heads)
        self.planning = ReviewPlanning(deps, self.github, ref, run_id, trigger, self.check)
        self.publishing = ReviewPublishing(deps, self.github, ref, run_id, self.live, self.check)

    async def run(self) -> JobResult:
        ref = self.ref
        with log_context(run_id=self.run_id, repository=ref.full_name, pull_number=ref.number):
            if await self.heads.before_start():
                return JobResult.completed("superseded before it started")
            live = self.live
            if await live.run_state(self.run_id) in ENDED:
                return JobResult.completed("this run has ended already")
            if await live.run_alive(self.run_id):
                return JobResult.completed("this run is live on another worker")
            async with live.beating_run(self.run_id):
                await live.open(self.run_id, ref, self.trigger)
                return await self._run()

    async def _run(self) -> JobResult:
        ended: State | None = State.FAILED
        try:
            planned = await self.live.plan(self.run_id)
            if planned is not None:  # picked up from a coordinator that died
                plan, diff = planned
                self._resume(plan)
                result = await self._coordinate(plan, diff)
            else:
                result = await self._start()
            ended = State.COMPLETE
            return JobResult.completed(result)
        except asyncio.CancelledError:
            if self.check.id is not None:
                completed = await asyncio.shield(self.check.cancelled(self.check.id))
                # Cancelled by a shutdown, the run stays live: arq or the janitor resume it.
                ended = State.FAILED if completed else None
            raise
        except Exception as exc:
            # The job's catch-all: whatever failed, the pull request gets a clear answer.
            log.exception("review of %s failed", self.ref.key)
            await self.check.report_failure(exc)
            return JobResult.failed(logged_reason(exc))
        finally:
            if ended is not None:
                await asyncio.shield(self.live.finish(self.run_id, ended, self.units))

    async def _start(self) -> str:
        planned = await self.planning.start()
        if isinstance(planned, str):  # ended before a plan: not reviewed, or its check run done
            return planned
        plan, diff, units = planned
        self.units = plan.units
        await self.live.begin(plan, diff, units)
        return await self._coordinate(plan, diff, fresh=True)

    def _resume(self, plan: RunPlan) -> None:
        check = self.check
        check.config, check.id, self.units = plan.config, plan.check_run_id, plan.units
        check.config_problems = [
            *(ConfigProblem(m, line) for m, line in plan.config_problems),
            *plan.config_notes,
        ]
        log.warning("picking up run %s of %s where its worker left it", self.run_id, self.ref.key)

    async def _coordinate(self, plan: RunPlan, diff: Diff, *, fresh: bool = False) -> str:
        """Have the fleet debate the plan's units; publish what they found, once. `diff` is
        the part of the pull request's diff the run covers; `fresh`, not a dead one's run."""
        check_id = plan.check_run_id
        queue = self.deps.queue
        attempts = self.deps.max_unit_attempts
        fanout = Fanout(self.live, queue, plan, max_attempts=attempts, fresh=fresh)
        try:
            debated = Review(units=await fanout.outcomes(), estimate=plan.estimate)
        except (Exception, asyncio.CancelledError):
            # Failed, stopped or superseded: the units still queued or running are not needed.
            await asyncio.shield(fanout.stop())
            raise
        # Landed under the pull request's landing lock: after the replies and commands that
        # changed the earlier run, before those that will read this one.
        async with self._landing() as latest:
            if (newer := await self.heads.newer_head()) is not None:
                await self.check.complete_superseded(check_id, newer)
                return "superseded before publishing"
            earlier = latest.record if latest and latest.record.run_id != self.run_id else None
            return await self.publishing.publish(plan, debated, diff, earlier, fresh=fresh)

    def _landing(self) -> AbstractAsyncContextManager[StoredRun | None]:
        return self.deps.pulls.landing(self.ref)
