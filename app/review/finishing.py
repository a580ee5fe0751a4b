"""The publishing step of one review run (:mod:`app.jobs.review`), once its units are
debated, run holding the pull request's landing lock.

    the pull request's threads, and whose 👎 on each counts, and Tiebreak's comments in its
    conversation →
    what the writers' 👎s taught kept (teaching) →
    the run's findings reconciled with the pull request's latest run and threads, and with
    what its proven findings' tests showed at this head →
    spend and notes → review and summary, beside them the label and the transcript →
    check run completed →
    the run remembered as the pull request's latest
"""

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from agents.diff import Diff
from agents.protocol import Severity
from agents.review import Review
from app.github.models import IssueComment
from app.publishing import check_runs, learnings_text, proof_text
from app.publishing.publication import (
    Conversation,
    FollowUp,
    RunInfo,
    RunRecord,
    Spend,
    UnitFile,
    UnitReading,
)
from app.publishing.rereview import PostedThread, Standing, reconcile
from app.review import check_run
from app.review.collaborators import Permissions
from app.review.landing import RunResult, publish_review, set_label
from app.review.posted import posted_threads
from app.review.resolutions import heeded, reopen
from app.review.run_context import RunContext
from app.review.teaching import learn_from_thumbs_down
from app.review.thumbs_down import refused
from app.review.together import together
from app.store.live import LiveRuns
from app.store.plans import RunPlan
from app.store.records import RunStatus, State
from app.store.transcripts import TranscriptRecord


async def publish(
    context: RunContext,
    live: LiveRuns,
    plan: RunPlan,
    debated: Review,
    diff: Diff,
    earlier: RunRecord | None,
    follow_ups: Sequence[FollowUp] = (),
    *,
    fresh: bool,
    readings: Mapping[str, UnitReading] | None = None,
) -> str:
    """Publish what the units found, reconciled with `earlier` (the pull request's latest run
    as it stands) and with what the tests of its proven findings showed at this head
    (`follow_ups`), and remember it as the latest run. `live` holds the run's
    coordination; `readings`, what the units read beside their diffs, as the run planned
    them (None: read back from their plans, for a run picked up from a coordinator that
    died)."""
    ref, run_id, config = context.ref, context.run_id, context.config
    shown = debated.at_least(Severity(config.min_severity))
    spend, threads, comments, read = await _standing(context, live, plan, readings)
    await _teach(context, plan, earlier, threads)
    standing, conversation = _reconcile(plan, shown, diff, earlier, threads, follow_ups)
    review = standing.review
    links = context.deps.links
    details_url = links.url(run_id) if links else None
    run = _run_shown(context, plan, debated, shown, spend, read, details_url)
    result = RunResult(review, diff, run, conversation, unposted=fresh)
    conclusion = str(result.planned.check.conclusion)
    learned = {unit: reading.learned for unit, reading in read.items()}
    transcript = TranscriptRecord.of_run(
        plan, diff, debated, spend, conclusion, learned, conversation.followed
    )
    await _land(context, result, comments, transcript, standing.reopen, details_url)
    await context.deps.pulls.save(
        RunRecord(
            run_id=run_id,
            ref=ref,
            check_run_id=context.check_run_id,
            conclusion=conclusion,
            review=review,
            diff=diff.text,
            changes=plan.changes,
            policy=plan.policy,
            config=config,
            details_url=details_url,
            conversation=conversation,
            readings={**standing.readings, **read},
            unit_files=_unit_files(plan, standing),
        )
    )
    return conclusion


def _unit_files(plan: RunPlan, standing: Standing) -> dict[str, tuple[UnitFile, ...]]:
    """Each of the run's units' slice of its diff, carried units' too; none when its plan,
    written before they were kept, has not this run's own."""
    if len(plan.unit_files) != plan.units:
        return {}
    return {**standing.unit_files, **dict(zip(plan.unit_ids, plan.unit_files, strict=True))}


class _Standing(NamedTuple):
    """Where a run stands as it publishes."""

    spend: Spend
    threads: list[PostedThread]
    """The threads Tiebreak started on the pull request, as people left them."""
    comments: list[IssueComment]
    """Tiebreak's comments in the pull request's conversation: its summary is among them."""
    readings: dict[str, UnitReading]
    """What the units read beside their diffs."""


async def _standing(
    context: RunContext,
    live: LiveRuns,
    plan: RunPlan,
    readings: Mapping[str, UnitReading] | None,
) -> _Standing:
    """The run marked completing; what it spent, the pull request's threads and comments of
    Tiebreak's as they stand, and what the units read beside their diffs (`readings`, or read
    back from their plans)."""
    run_id, github = context.run_id, context.github
    allowance = context.deps.allowance(context.ref.installation_id)
    reading = live.readings(run_id, plan.units) if readings is None else _known(readings)
    _, spent, remaining, (threads, comments), read = await together(
        live.set_run(run_id, RunStatus(state=State.COMPLETING)),
        live.ceiling(run_id, plan.policy.token_ceiling).spent(),
        allowance.remaining(),
        together(read_threads(context), github.own_issue_comments(context.ref)),
        reading,
    )
    ceiling, cap = plan.policy.token_ceiling, allowance.cap
    spend = Spend(spent=spent, ceiling=ceiling, daily_remaining=remaining, daily_cap=cap)
    return _Standing(spend, threads, comments, read)


async def _land(
    context: RunContext,
    result: RunResult,
    comments: list[IssueComment],
    transcript: TranscriptRecord,
    reopened: list[PostedThread],
    details_url: str | None,
) -> None:
    """Land `result` on the pull request (whose conversation has Tiebreak's `comments`), keep
    its transcript and complete its check run."""
    github, ref, planned = context.github, context.ref, result.planned
    # The label and the transcript stand whatever GitHub answers the review: landed beside it.
    publication, _, _ = await together(
        publish_review(github, ref, result, comments),
        set_label(github, ref, planned.label, planned.label_name),
        context.deps.transcripts().save(transcript),
    )
    await reopen(github, ref, reopened)
    await check_run.complete(context, publication.check, details_url=details_url)


async def _known(readings: Mapping[str, UnitReading]) -> dict[str, UnitReading]:
    return dict(readings)


def _run_shown(
    context: RunContext,
    plan: RunPlan,
    debated: Review,
    shown: Review,
    spend: Spend,
    readings: dict[str, UnitReading],
    details_url: str | None,
) -> RunInfo:
    """The run as its review and summary show it: its spend, the notes on what it left out
    and what it applied, and the links to its transcript (`details_url`) and its pull
    request."""
    notes = check_runs.scope_notes(
        excluded=plan.excluded_files,
        hidden=len(debated.findings) - len(shown.findings),
        min_severity=context.config.min_severity,
        head_not_read=plan.head_not_read,
    )
    unfit = proof_text.environment_note(debated.findings)
    notes += ((f"_{plan.tests_note}_",) if plan.tests_note else ()) + ((unfit,) if unfit else ())
    notes += learnings_text.applied(r.learned for r in readings.values())
    return context.run_info.model_copy(
        update={
            "spend": spend,
            "notes": notes,
            "details_url": details_url,
            "pull_url": plan.html_url or None,
        }
    )


async def read_threads(context: RunContext) -> list[PostedThread]:
    """The threads Tiebreak started on the pull request, each a writer reacted 👎 to marked
    with the first such writer, and each a person resolved marked as a writer's or
    disregarded: only a writer's 👎 or resolving dismisses a finding (see
    :mod:`app.review.resolutions`), and each person is asked about once."""
    github, ref = context.github, context.ref
    permissions = Permissions(github, ref)
    posted = await posted_threads(github, ref)
    return await heeded(await refused(github, ref, posted, permissions), permissions)


async def _teach(
    context: RunContext, plan: RunPlan, earlier: RunRecord | None, threads: list[PostedThread]
) -> None:
    """Keep what the writers' 👎s on the findings of `earlier` taught (see
    :mod:`app.review.teaching`)."""
    await learn_from_thumbs_down(
        context.github,
        context.deps.learnings(),
        context.config.learnings,
        context.ref,
        earlier,
        threads,
        pull_url=plan.html_url,
        now=context.deps.clock(),
    )


def _reconcile(
    plan: RunPlan,
    review: Review,
    diff: Diff,
    earlier: RunRecord | None,
    threads: list[PostedThread],
    follow_ups: Sequence[FollowUp],
) -> tuple[Standing, Conversation]:
    """The pull request's standing findings after this run (and the threads of those to
    reopen, see :mod:`app.review.resolutions`) and what its conversation already has of them
    (see :mod:`app.publishing.rereview`), its `threads` as people left them.
    `earlier` is the latest run as it stands now, not as planning read it: a ruling or a reply
    heard meanwhile may have changed it, and a run picked up from a dead coordinator has no
    plan-time copy."""
    standing = reconcile(
        review, diff, scope=plan.scope, earlier=earlier, threads=threads, follow_ups=follow_ups
    )
    conversation = Conversation(
        threads=standing.threads,
        gone=standing.gone,
        since=plan.scope.since,
        why_full=plan.scope.why_full,
        reviewed_files=len(plan.scope.part(diff).files),
        carried=standing.carried,
        dismissed=standing.dismissed,
        followed=standing.followed,
    )
    return standing, conversation
