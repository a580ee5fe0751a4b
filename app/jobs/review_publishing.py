"""The publishing step of one review run (:mod:`app.jobs.review`), once its units are
debated, run holding the pull request's landing lock.

    the run's findings reconciled with the pull request's latest run and threads →
    spend and notes → review, summary → transcript, label → check run completed →
    the run remembered as the pull request's latest
"""

from dataclasses import dataclass

from agents.diff import Diff
from agents.protocol import Severity
from agents.review import Review
from app.jobs.landing import publish_review, set_label
from app.jobs.permissions import Permissions
from app.jobs.posted import posted_threads
from app.jobs.refusals import refused
from app.jobs.resolutions import heeded, reopen
from app.jobs.review_check import ReviewCheck, RunStep
from app.jobs.teaching import learn_from_thumbs_down
from app.jobs.together import together
from app.publishing import check_runs, learnings
from app.publishing.publication import Conversation, RunInfo, RunRecord, Spend, UnitReading
from app.publishing.rereview import PostedThread, reconcile
from app.store.live import LiveRuns
from app.store.plans import RunPlan
from app.store.records import RunStatus, State
from app.store.transcripts import TranscriptRecord


@dataclass
class ReviewPublishing(RunStep):
    """What one review run publishes, and how it is remembered."""

    live: LiveRuns
    check: ReviewCheck

    async def publish(
        self, plan: RunPlan, debated: Review, diff: Diff, earlier: RunRecord | None, *, fresh: bool
    ) -> str:
        """Publish what the units found, reconciled with `earlier` (the pull request's latest
        run as it stands), and remember it as the latest run."""
        ref, check_id, config = self.ref, plan.check_run_id, self.check.config
        shown = debated.at_least(Severity(config.min_severity))
        allowance = self.deps.allowance(ref.installation_id)
        _, spent, remaining, (review, conversation, reopened), readings = await together(
            self.live.set_run(self.run_id, RunStatus(state=State.COMPLETING)),
            self.live.ceiling(self.run_id, plan.policy.token_ceiling).spent(),
            allowance.remaining(),
            self._reconcile(plan, shown, diff, earlier),
            self.live.readings(self.run_id, plan.units),
        )
        ceiling, cap = plan.policy.token_ceiling, allowance.cap
        spend = Spend(spent=spent, ceiling=ceiling, daily_remaining=remaining, daily_cap=cap)
        run = self._run_shown(plan, debated, shown, spend, readings)
        publication = await publish_review(
            self.github, ref, review, diff, run, conversation, unposted=fresh
        )
        await reopen(self.github, ref, reopened)
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
        await self.check.complete(check_id, publication.check)
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
                details_url=self.check.details_url,
                conversation=conversation,
                readings=readings,
            )
        )
        return conclusion

    def _run_shown(
        self,
        plan: RunPlan,
        debated: Review,
        shown: Review,
        spend: Spend,
        readings: dict[str, UnitReading],
    ) -> RunInfo:
        """The run as its review and summary show it: its spend, the notes on what it left
        out and what it applied, and the links to its transcript and its pull request."""
        config = self.check.config
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
        self.check.details_url = links.url(self.run_id) if links else None
        return self.check.run_info.model_copy(
            update={
                "spend": spend,
                "notes": notes,
                "details_url": self.check.details_url,
                "pull_url": plan.html_url or None,
            }
        )

    async def _reconcile(
        self, plan: RunPlan, review: Review, diff: Diff, earlier: RunRecord | None
    ) -> tuple[Review, Conversation, list[PostedThread]]:
        """The pull request's standing findings after this run, what its conversation
        already has of them (see :mod:`app.publishing.rereview`) and the threads of standing
        findings to reopen (:mod:`app.jobs.resolutions`). `earlier` is the latest
        run as it stands now, not as planning read it: a ruling or a reply heard meanwhile
        may have changed it, and a run picked up from a dead coordinator has no plan-time
        copy."""
        posted = await posted_threads(self.github, self.ref)
        # Only a writer's 👎 or resolving dismisses a finding: each person is asked about once.
        permissions = Permissions(self.github, self.ref)
        threads = await heeded(
            await refused(self.github, self.ref, posted, permissions), permissions
        )
        await learn_from_thumbs_down(
            self.github,
            self.deps.learnings(),
            self.check.config.learnings,
            self.ref,
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
        return standing.review, conversation, standing.reopen
