"""The janitor: no review is left orphaned, no pull request with a check run that spins.

A review's coordinator keeps a heartbeat in Redis. A worker that dies mid-review (killed, out
of memory, its machine gone) stops it; on one worker of the fleet (arq's unique cron job,
every minute by default) the janitor queues a new coordinator for each run whose heartbeat
lapsed, which picks the run up from Redis where it was (or ends it, as superseded, if a newer
push came meanwhile); a run whose keys expired before anyone did is forgotten.

Findings' tests dispatched to repositories' Actions are polled here too, for a webhook that
never came, and a run past its deadline is settled as not run (:mod:`app.jobs.workflow_results`).

As a last resort, a review opens its check run in Redis with a deadline and closes it when it
completes it; the janitor claims the check runs past their deadline, one at a time, completes
those GitHub still shows unfinished as `timed_out`, saying why, and closes each once it is
completed: a sweep cut short (its job's timeout, a shutdown) leaves the rest to the next. A
check run whose review never learnt its id (remembered as being created, before it was asked
for) is looked up among the head's by the run's id, its `external_id`, and each of them still
unfinished is completed so.
"""

import logging
import time
from contextlib import AbstractContextManager
from typing import Any

from app.events import PullKey
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.job_results import JobResult
from app.jobs.workflow_results import sweep_workflow_runs
from app.publishing import check_runs
from app.review.landing import complete_check_run
from app.store.pulls import OpenCheck
from app.telemetry.logs import log_context

RETRY_LATER = 300
"""Seconds a sweep's claim on a check run lasts: after them, a check run it did not complete
(GitHub would not let it, or the sweep was cut short) is tried again."""

log = logging.getLogger(__name__)


async def sweep(ctx: dict[str, Any]) -> JobResult:
    """arq's cron entry point: pick up orphaned runs, complete overdue check runs; say how
    many of each there were."""
    deps, now = deps_of(ctx), time.time()
    resumed = await resume_orphans(deps, now=now)
    completed = await complete_overdue(deps, now=now)
    settled = await sweep_workflow_runs(deps, now=now)
    return JobResult.completed(
        f"{resumed} runs resumed, {completed} check runs completed, "
        f"{settled} test runs past their deadline"
    )


async def resume_orphans(deps: WorkerDeps, *, now: float) -> int:
    """Queue a new coordinator for each live run whose coordinator's heartbeat lapsed (its
    worker died); it picks the run up where it was. Return how many were queued."""
    live, queue = deps.live_runs(), deps.queue
    resumed = 0
    for orphan in await live.orphans(started_before=now - deps.heartbeat):
        with _about(orphan.run_id, orphan.ref):
            if await queue.resume_pending(orphan.run_id, orphan.resumes):
                continue  # its new coordinator is queued, or starting
            resumes = await live.count_resume(orphan.run_id)
            await queue.resume_review(orphan.ref, orphan.trigger, orphan.run_id, resumes)
            log.warning("run %s of %s lost its worker; resuming it", orphan.run_id, orphan.ref.key)
            resumed += 1
    return resumed


async def complete_overdue(deps: WorkerDeps, *, now: float) -> int:
    """Complete every check run past its deadline that is still unfinished; return how many."""
    completed = 0
    while (check := await deps.pulls.claim_overdue_check(now, now + RETRY_LATER)) is not None:
        with _about(check.run_id, check.ref):
            try:
                completed += await _complete(deps, check)
            except GitHubError as exc:  # tried again once the claim lapses
                log.warning("could not complete the check runs of %s: %s", check.run_id, exc)
            else:
                await deps.pulls.close_check(check)
    return completed


def _about(run_id: str, ref: PullKey) -> AbstractContextManager[None]:
    return log_context(run_id=run_id, repository=ref.full_name, pull_number=ref.number)


async def _complete(deps: WorkerDeps, check: OpenCheck) -> int:
    """Complete the overdue check run, or each of its run's if its id was never learnt, that
    GitHub still shows unfinished; return how many."""
    github: InstallationClient = deps.github.installation(check.ref.installation_id)
    if check.check_run_id is None:
        created = await github.run_check_runs(check.ref, check.run_id)
        unfinished = [found.id for found in created if found.status != "completed"]
    elif await github.check_run_status(check.ref, check.check_run_id) != "completed":
        unfinished = [check.check_run_id]
    else:
        unfinished = []  # completed by its review after all; only the bookkeeping was lost
    minutes = deps.check_deadline // 60
    result = check_runs.timed_out(minutes, run_id=check.run_id, head_sha=check.ref.head_sha)
    for check_id in unfinished:
        await complete_check_run(github, check.ref, check_id, result)
        log.warning("completed check run %s of %s as timed out", check_id, check.ref.key)
    return len(unfinished)
