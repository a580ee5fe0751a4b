"""The check run of one review run (:mod:`app.jobs.review`): opened in progress, with the
deadline past which the janitor completes it, and completed with the config's problems beside
whatever the run came to — published, not reviewed, stopped by a person, superseded by a push
or failed. A run is opened one check run whatever happens to its job: started again after a
shutdown, it completes the one it opened before. Its creation is remembered before it is asked
for: one whose answer never came (a shutdown, a 5xx) is found again by the run's id, its
`external_id`, by the run's next attempt or, past the deadline, by the janitor.

What every completion shows besides its result is the run's context
(:mod:`app.review.run_context`): the repository's config (the run's label and choices, read at
the start or picked up from the plan) and the config's problems. The transcript's link, which
only a published run has, is given by the step that publishes.
"""

import logging
import time

from app.bodies import NewCheckRun
from app.github.errors import GitHubError
from app.publishing import check_runs
from app.publishing.publication import CheckRunResult
from app.review import superseding
from app.review.failures import public_reason
from app.review.landing import complete_check_run, now
from app.review.run_context import RunContext, RunStart
from app.review.together import together
from app.store.pulls import OpenCheck
from app.store.records import RunStatus

log = logging.getLogger(__name__)


async def opened(run: RunStart) -> RunContext:
    """`run` with its check run created, in progress (the job is running: it was queued only
    until now), or the one it opened before a shutdown cut its job short (`run` is a
    :class:`RunContext` then, or its creation's answer never came); remembered with the run,
    and until a deadline past which the janitor completes it if this job never does."""
    # A review whose tests run in Actions may wait for them up to their timeout.
    verify = run.config.verify
    waits = verify.timeout_minutes * 60 if verify.in_actions else 0
    deadline = time.time() + run.deps.check_deadline + waits
    if isinstance(run, RunContext):
        check_id = run.check_run_id
    else:
        check_id = await _created(run, deadline)
    await together(
        run.deps.live_runs().set_run(run.run_id, RunStatus(check_run=check_id)),
        run.deps.pulls.open_check(_open_check(run, check_id), deadline),
    )
    return run.with_check_run(check_id)


async def _created(run: RunStart, deadline: float) -> int:
    """The run's new check run; or the one an earlier attempt, or a call GitHub answered 5xx,
    created without the run learning its id, still in progress, rather than a second."""
    if await run.deps.pulls.creating_check(_open_check(run, None), deadline):
        earlier = await _unfinished(run)
        if earlier is not None:
            return earlier
    check = NewCheckRun(status="in_progress", started_at=now(), external_id=run.run_id)
    try:
        return await run.github.create_check_run(run.ref, check)
    except GitHubError as exc:
        created = await _unfinished(run) if (exc.status or 0) >= 500 else None
        if created is None:
            raise
        return created


async def _unfinished(run: RunStart) -> int | None:
    """The newest of the run's check runs on GitHub still in progress, if any."""
    created = await run.github.run_check_runs(run.ref, run.run_id)
    unfinished = [found.id for found in created if found.status != "completed"]
    return unfinished[-1] if unfinished else None


async def complete(
    context: RunContext, result: CheckRunResult, *, details_url: str | None = None
) -> None:
    """Complete the run's check run with `result` and the config's problems; its "Details"
    link goes to `details_url` (the run's transcript) when there is one."""
    await complete_check_run(
        context.github,
        context.ref,
        context.check_run_id,
        check_runs.with_config_problems(result, context.config_problems),
        details_url=details_url,
    )
    await context.deps.pulls.close_check(_open_check(context, context.check_run_id))


async def cancelling(run: RunStart) -> CheckRunResult | None:
    """What the check run of a job arq cancelled is completed with: stopped, if a person
    stopped it, or superseded, if a newer push did; None if neither did (a shutdown cancelled
    it, and leaves the run to resume)."""
    stopped_by = await run.deps.pulls.stopped_by(run.run_id)
    if stopped_by is not None:
        return check_runs.stopped(stopped_by, run=run.run_info)
    if await superseding.aborted_by_push(run):
        return await _superseded(run)
    return None


async def report_failure(run: RunStart, exc: Exception) -> None:
    """Complete the run's check run as failed, opening it first if it is not open."""
    try:
        context = run if isinstance(run, RunContext) else await opened(run)
        await complete(context, check_runs.failed(public_reason(exc), run=context.run_info))
    except GitHubError as report:
        # Without a check run there is nowhere to report; the log is the only trace.
        log.error("could not report the failure on %s: %s", run.ref.key, report)


async def complete_superseded(context: RunContext, newer: str | None = None) -> None:
    """Complete the check run as superseded by the head `newer`, by default the latest head
    Redis knows."""
    await complete(context, await _superseded(context, newer))


async def _superseded(run: RunStart, newer: str | None = None) -> CheckRunResult:
    """What the check run of a run a push superseded is completed with: superseded by
    `newer`, by default the latest head Redis knows."""
    if newer is None:
        newer = await superseding.latest_heard(run)
    return check_runs.superseded(newer or "", run=run.run_info)


def _open_check(run: RunStart, check_id: int | None) -> OpenCheck:
    return OpenCheck(ref=run.ref, check_run_id=check_id, run_id=run.run_id)
