"""The review job: one pull request head, from check run to published review.

    pull request, config (base branch only) → does this event get a review? →
    check run (in progress) → daily allowance → diff, in-scope files →
    the debates → review, label → check run completed

An automatic review the config does not want (that event, that author, a draft) ends
quietly, before any check run. A newer push supersedes the job: it stops before publishing
and completes its check run as superseded; whether a push is newer is GitHub's to say
(:mod:`app.jobs.superseding`). It publishes holding the pull request's landing lock, so a
reply or a command changing the earlier run lands wholly before it or not at all. Whatever
goes wrong, the check run is completed with a clear message: this job is one of the two
places allowed to catch everything.
"""

import asyncio
import logging
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any

from agents.coverage import estimate
from agents.diff import Diff, ReviewUnit
from agents.protocol import Severity
from agents.review import Review
from app.bodies import NewCheckRun
from app.events import PullRequestRef
from app.github.configs import repository_config
from app.github.errors import GitHubError
from app.github.models import PullRequest
from app.github.protocol import InstallationClient
from app.jobs.actions_gate import tests_in_actions
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.failures import logged_reason, public_reason
from app.jobs.fanout import Fanout
from app.jobs.landing import complete_check_run, now, publish_review, set_label
from app.jobs.posted import posted_threads
from app.jobs.reading import reading_for
from app.jobs.rescoping import scope_since
from app.jobs.results import JobResult
from app.jobs.superseding import Superseding
from app.jobs.teaching import applied, learn_from_thumbs_down
from app.jobs.together import together
from app.publishing import check_runs, learnings
from app.publishing.publication import (
    CheckRunResult,
    Conversation,
    RunInfo,
    RunRecord,
    Spend,
)
from app.publishing.rereview import Scope, reconcile
from app.store.allowance import DailyAllowance
from app.store.plans import RunPlan
from app.store.pulls import OpenCheck, StoredRun
from app.store.records import ENDED, RunStatus, State
from app.store.transcripts import TranscriptRecord
from app.telemetry.logs import log_context
from policies.budget import MIN_CEILING
from policies.config import RepoConfig
from policies.config_file import ConfigProblem
from policies.debate import DebatePolicy
from policies.ignoring import PullFacts

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
    def __init__(
        self, deps: WorkerDeps, ref: PullRequestRef, run_id: str, trigger: str | None = None
    ) -> None:
        self.deps = deps
        self.ref = ref
        self.run_id = run_id
        self.trigger = trigger
        self.config = RepoConfig()
        self.config_problems: list[ConfigProblem] = []
        self.check_id: int | None = None
        self.units = 0
        self.details_url: str | None = None
        """The link to the run's transcript, once there is one."""
        self.head_not_read: str | None = None
        """Why the repository at the head was not read whole, once the reading says."""
        self.github: InstallationClient = deps.github.installation(ref.installation_id)
        self.live = deps.live_runs()
        self.heads = Superseding(deps, self.github, ref, run_id)

    @property
    def run_info(self) -> RunInfo:
        return RunInfo.of(self.config, run_id=self.run_id, head_sha=self.ref.head_sha)

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
            if self.check_id is not None:
                completed = await asyncio.shield(self._cancelled(self.check_id))
                # Cancelled by a shutdown, the run stays live: arq or the janitor resume it.
                ended = State.FAILED if completed else None
            raise
        except Exception as exc:
            # The job's catch-all: whatever failed, the pull request gets a clear answer.
            log.exception("review of %s failed", self.ref.key)
            await self._report_failure(exc)
            return JobResult.failed(logged_reason(exc))
        finally:
            if ended is not None:
                await asyncio.shield(self.live.finish(self.run_id, ended, self.units))

    async def _start(self) -> str:
        pull = await self.github.pull_request(self.ref)
        self.config, self.config_problems = await self._config(pull.base_sha)
        # A review a person asked for always happens (unless the config turns Tiebreak off).
        quiet = None
        if self.trigger is not None:
            quiet = self.config.declines(self.trigger, _facts(pull))
        if quiet is not None:
            return f"not reviewed: {quiet}"
        self.check_id = await self._open_check_run()
        return await self._review(self.check_id, pull)

    def _resume(self, plan: RunPlan) -> None:
        self.config, self.check_id, self.units = plan.config, plan.check_run_id, plan.units
        self.config_problems = [
            *(ConfigProblem(m, line) for m, line in plan.config_problems),
            *plan.config_notes,
        ]
        log.warning("picking up run %s of %s where its worker left it", self.run_id, self.ref.key)

    async def _review(self, check_id: int, pull: PullRequest) -> str:
        github, ref, config = self.github, self.ref, self.config
        allowance = self.deps.allowance(ref.installation_id)
        if pull.head_sha != ref.head_sha:
            await self._complete(check_id, check_runs.superseded(pull.head_sha, run=self.run_info))
            return "superseded: the pull request has a newer head"
        if not config.enabled:
            await self._complete(check_id, check_runs.disabled(run=self.run_info))
            return "disabled by the repository's config"
        if await allowance.remaining() < MIN_CEILING:
            await self._complete(check_id, await _daily_budget_reached(allowance, self.run_info))
            return "daily budget reached"
        text, scope = await together(github.diff(ref), self._scope())
        # The diff is parsed and split once, here; each unit job reads only its own slice.
        whole = Diff.parse(text, allow_empty=True)
        paths = config.path_filter()
        diff = Diff(tuple(f for f in whole.files if paths.reviews(f.path)))
        reviewed = scope.part(diff)
        units, policy, (tests, tests_note) = await together(
            self._units(pull, reviewed),
            self._policy(),
            tests_in_actions(github, ref, pull, config),
        )
        expected = estimate(units, policy)
        log.info("review of %s: %s", ref.key, expected.describe())
        plan = RunPlan(
            run_id=self.run_id,
            ref=ref,
            check_run_id=check_id,
            scope=scope,
            unit_ids=tuple(u.id for u in units),
            unit_paths=tuple(u.diff.paths for u in units),
            estimate=expected,
            policy=policy,
            config=config,
            config_notes=self.config_problems,
            excluded_files=len(whole.files) - len(diff.files),
            tests=tests,
            tests_note=tests_note,
            head_not_read=self.head_not_read,
            title=pull.title,
            html_url=pull.html_url,
            started_at=time.time(),
        )
        self.units = plan.units
        await self.live.begin(plan, diff, units)
        return await self._coordinate(plan, diff, fresh=True)

    async def _units(self, pull: PullRequest, diff: Diff) -> list[ReviewUnit]:
        """The review units of `diff`, each with what its agents read beside it. The files
        read for them are let go here, not held while the debates run."""
        deps = self.deps
        read, learnings = await together(
            reading_for(
                self.github,
                self.ref,
                pull,
                self.config,
                diff,
                deps.parsing,
                deps.reading,
                deps.snapshots,
            ),
            applied(deps.learnings(), self.config.learnings, self.ref.full_name),
        )
        self.head_not_read = read.head_not_read
        reading = read.reading
        reading = replace(reading, guidance=replace(reading.guidance, learnings=learnings))
        return [
            replace(
                unit, learned=tuple(item.shown() for item in learnings.for_paths(unit.diff.paths))
            )
            for unit in reading.attach(diff.units(deps.unit_tokens))
        ]

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
                await self._complete_superseded(check_id, newer)
                return "superseded before publishing"
            earlier = latest.record if latest and latest.record.run_id != self.run_id else None
            return await self._publish(plan, debated, diff, earlier, fresh=fresh)

    def _landing(self) -> AbstractAsyncContextManager[StoredRun | None]:
        return self.deps.pulls.landing(self.ref)

    async def _publish(
        self, plan: RunPlan, debated: Review, diff: Diff, earlier: RunRecord | None, *, fresh: bool
    ) -> str:
        """Publish what the units found, reconciled with `earlier` (the pull request's latest
        run as it stands), and remember it as the latest run."""
        ref, check_id, config = self.ref, plan.check_run_id, self.config
        shown = debated.at_least(Severity(config.min_severity))
        allowance = self.deps.allowance(ref.installation_id)
        _, spent, remaining, (review, conversation), readings = await together(
            self.live.set_run(self.run_id, RunStatus(state=State.COMPLETING)),
            self.live.ceiling(self.run_id, plan.policy.token_ceiling).spent(),
            allowance.remaining(),
            self._reconcile(plan, shown, diff, earlier),
            self.live.readings(self.run_id, plan.units),
        )
        ceiling, cap = plan.policy.token_ceiling, allowance.cap
        spend = Spend(spent=spent, ceiling=ceiling, daily_remaining=remaining, daily_cap=cap)
        notes = check_runs.scope_notes(
            excluded=plan.excluded_files,
            hidden=len(debated.findings) - len(shown.findings),
            min_severity=config.min_severity,
            head_not_read=plan.head_not_read,
        )
        notes += ((f"_{plan.tests_note}_",) if plan.tests_note else ()) + learnings.applied(
            r.learned for r in readings.values()
        )
        links = self.deps.links
        self.details_url = links.url(self.run_id) if links else None
        run = self.run_info.model_copy(
            update={
                "spend": spend,
                "notes": notes,
                "details_url": self.details_url,
                "pull_url": plan.html_url or None,
            }
        )
        publication = await publish_review(
            self.github, ref, review, diff, run, conversation, unposted=fresh
        )
        conclusion = str(publication.check.conclusion)
        await together(
            self.deps.transcripts().save(
                TranscriptRecord.of_run(
                    plan,
                    diff,
                    debated,
                    spend,
                    conclusion,
                    {unit: reading.learned for unit, reading in readings.items()},
                )
            ),
            set_label(self.github, ref, publication.label, publication.label_name),
        )
        await self._complete(check_id, publication.check)
        await self.deps.pulls.save(
            RunRecord(
                run_id=self.run_id,
                ref=ref,
                check_run_id=check_id,
                conclusion=conclusion,
                review=review,
                diff=diff.text,
                policy=plan.policy,
                config=config,
                details_url=self.details_url,
                conversation=conversation,
                readings=readings,
            )
        )
        return conclusion

    async def _earlier(self) -> RunRecord | None:
        """The pull request's latest finished review before this run, if it has one."""
        earlier = await self.deps.pulls.latest(self.ref)
        return earlier if earlier is not None and earlier.run_id != self.run_id else None

    async def _scope(self) -> Scope:
        return await scope_since(self.github, self.ref, self.config, await self._earlier())

    async def _reconcile(
        self, plan: RunPlan, review: Review, diff: Diff, earlier: RunRecord | None
    ) -> tuple[Review, Conversation]:
        """The pull request's standing findings after this run, and what its conversation
        already has of them (see :mod:`app.publishing.rereview`). `earlier` is the latest
        run as it stands now, not as planning read it: a ruling or a reply heard meanwhile
        may have changed it, and a run picked up from a dead coordinator has no plan-time
        copy."""
        threads = await posted_threads(self.github, self.ref)
        await learn_from_thumbs_down(
            self.github,
            self.deps.learnings(),
            self.config.learnings,
            earlier,
            threads,
            pull_url=plan.html_url,
            now=self.deps.clock(),
        )
        standing = reconcile(review, diff, scope=plan.scope, earlier=earlier, threads=threads)
        conversation = Conversation(
            threads=standing.threads,
            gone=standing.gone,
            since=plan.scope.since,
            why_full=plan.scope.why_full,
            reviewed_files=len(plan.scope.part(diff).files),
            carried=standing.carried,
            dismissed=standing.dismissed,
        )
        return standing.review, conversation

    async def _policy(self) -> DebatePolicy:
        """The repository's debate policy, with a budget set by `/tiebreak budget` for this
        run (never above the repository's own ceiling)."""
        own = self.config.debate
        budget = await self.deps.pulls.take_budget(self.ref)
        if budget is None:
            return own
        ceiling = max(MIN_CEILING, min(budget, own.token_ceiling))
        return DebatePolicy.model_validate({**own.model_dump(), "token_ceiling": ceiling})

    async def _config(self, base_sha: str) -> tuple[RepoConfig, list[ConfigProblem]]:
        """The repository's config from the base commit, over its organisation's defaults:
        the change under review cannot rewrite its own rules."""
        return await repository_config(self.github, self.ref, base_sha)

    async def _open_check_run(self) -> int:
        """Create the run's check run, in progress (the job is running: it was queued only
        until now), which the janitor completes if this job never does."""
        check = NewCheckRun(status="in_progress", started_at=now(), external_id=self.run_id)
        check_id = await self.github.create_check_run(self.ref, check)
        # A review whose tests run in Actions may wait for them up to their timeout.
        waits = self.config.verify.timeout_minutes * 60 if self.config.verify.in_actions else 0
        deadline = time.time() + self.deps.check_deadline + waits
        await self.deps.pulls.open_check(self._open_check(check_id), deadline)
        return check_id

    def _open_check(self, check_id: int) -> OpenCheck:
        return OpenCheck(ref=self.ref, check_run_id=check_id, run_id=self.run_id)

    async def _complete(self, check_id: int, result: CheckRunResult) -> None:
        await complete_check_run(
            self.github,
            self.ref,
            check_id,
            check_runs.with_config_problems(result, self.config_problems),
            details_url=self.details_url,
        )
        await self.deps.pulls.close_check(self._open_check(check_id))

    async def _cancelled(self, check_id: int) -> bool:
        """Complete the check run of a job arq cancelled, if a person stopped it or a newer
        push superseded it; return whether it did (a shutdown leaves the run to resume)."""
        stopped_by = await self._stopped_by()
        if stopped_by is not None:
            await self._complete(check_id, check_runs.stopped(stopped_by, run=self.run_info))
        elif await self.heads.aborted_by_push():
            await self._complete_superseded(check_id)
        else:
            return False
        return True

    async def _report_failure(self, exc: Exception) -> None:
        try:
            if self.check_id is None:
                self.check_id = await self._open_check_run()
            await self._complete(
                self.check_id, check_runs.failed(public_reason(exc), run=self.run_info)
            )
        except GitHubError as report:
            # Without a check run there is nowhere to report; the log is the only trace.
            log.error("could not report the failure on %s: %s", self.ref.key, report)

    async def _complete_superseded(self, check_id: int, newer: str | None = None) -> None:
        """Complete the check run as superseded by `newer`, by default the latest head Redis
        knows."""
        if newer is None:
            newer = await self.heads.latest_heard()
        await self._complete(check_id, check_runs.superseded(newer or "", run=self.run_info))

    async def _stopped_by(self) -> str | None:
        return await self.deps.pulls.stopped_by(self.run_id)


async def _daily_budget_reached(allowance: DailyAllowance, run: RunInfo) -> CheckRunResult:
    return check_runs.daily_budget_reached(
        spent=await allowance.spent(), cap=allowance.cap, resets_at=allowance.resets_at(), run=run
    )


def _facts(pull: PullRequest) -> PullFacts:
    return PullFacts(
        author=pull.author,
        draft=pull.draft,
        base_branch=pull.base_ref,
        head_branch=pull.head_ref,
        title=pull.title,
        labels=pull.labels,
    )
