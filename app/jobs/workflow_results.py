"""Findings' tests run in a repository's Actions, settled: each result taken once its
workflow run completes, and the unit that waited for it taken up again.

    `workflow_run` completed (the webhook) ─┐
    the janitor's poll, every sweep ────────┼→ take_workflow_run: the run Tiebreak dispatched
                                            │  found, its artifact read → the result recorded
    the janitor, past a run's deadline ─────┘→ recorded as not run ("did not finish in N min")

A run titled with a test's token is not therefore the run Tiebreak dispatched: the title is
public, and anyone may give a run that title. A delivery of a run of another installation or
repository is dropped; so is one of a run that is not the run GitHub said the dispatch started
or, where GitHub did not say, that is not the App's dispatch of the workflow from the branch
after the dispatch (:class:`app.github.models.Dispatch`).

Whoever settles a run, it is settled once (:class:`app.store.workflow_runs.WorkflowRuns`),
and the settling that leaves its unit waiting for nothing more queues the unit's attempt
again, if the unit still waits (else the attempt, about to suspend, finds the results in and
takes itself up); a proven finding's test run again at a later head wakes the review's
coordinator, which waits for it (:mod:`app.review.following`).
"""

import logging
import math
from typing import Any

from agents.debate.recorded_tests import RecordedRun
from app.events import CompletedRun
from app.github.errors import GitHubError
from app.github.installation_client import ActionsClient
from app.github.models import Dispatch, WorkflowRun
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.job_results import JobResult
from app.store.records import State
from app.store.workflow_runs import PendingRun
from app.telemetry.logs import log_context
from app.verification.workflow import (
    ARTIFACT,
    MAX_ZIP_BYTES,
    RUN_TITLE,
    WorkflowResultError,
    command_for,
    not_run,
    read_result,
    shown,
)

log = logging.getLogger(__name__)


async def take_workflow_run(
    ctx: dict[str, Any], token: str, completed: dict[str, Any] | None = None
) -> JobResult:
    """arq's entry point: take run `token`'s result if it has finished (the run a delivery
    says `completed`, if it is the run Tiebreak dispatched)."""
    deps = deps_of(ctx)
    pending = await deps.workflow_runs().get(token)
    if pending is None:
        return JobResult.completed("settled already")
    delivered = None if completed is None else CompletedRun.model_validate(completed)
    with log_context(run_id=pending.run_id, unit=pending.unit):
        if delivered is not None and not delivered.ran_in(pending.ref):
            log.warning(
                "workflow run %s of %s/%s (installation %s) is titled with the token of a run"
                " dispatched to %s: dropped",
                delivered.run_id,
                delivered.owner,
                delivered.repo,
                delivered.installation_id,
                pending.ref.full_name,
            )
            return JobResult.completed("dropped: another repository's run")
        actions = deps.github.installation(pending.ref.installation_id).actions
        run_id = None if delivered is None else delivered.run_id
        run = await actions.find_run(pending.ref, dispatch_of(pending), run_id)
        if run is None and run_id is not None:
            log.warning("workflow run %s is not the run Tiebreak dispatched: dropped", run_id)
            return JobResult.completed("dropped: not the run Tiebreak dispatched")
        if run is None or not run.completed:
            return JobResult.completed("not finished yet")
        await settle(deps, pending, await _result(actions, pending, run))
        return JobResult.completed(f"settled: the workflow run ended {run.conclusion}")


def dispatch_of(pending: PendingRun) -> Dispatch:
    """How the run `pending` stands for is known among the repository's runs."""
    return Dispatch(
        workflow=pending.workflow,
        branch=pending.branch,
        title=RUN_TITLE.format(token=pending.token),
        since=pending.dispatched_at,
        run_id=pending.github_run,
    )


async def sweep_workflow_runs(deps: WorkerDeps, *, now: float) -> int:
    """Settle the runs past their deadline as not run, and queue a look at each other one
    (the poll, for a webhook that never came). Return how many were settled."""
    runs, settled = deps.workflow_runs(), 0
    for token in await runs.due(now):
        pending = await runs.get(token)
        if pending is None:
            await runs.discard(token)
            continue
        minutes = f"{pending.minutes} minute" + ("" if pending.minutes == 1 else "s")
        reason = f"the workflow did not finish in {minutes}"
        shown = not_run(pending.test, pending.fix, reason, own=pending.own)
        settled += await settle(deps, pending, shown)
    minute = math.floor(now / 60)
    for token in await runs.waiting():
        await deps.queue.take_workflow_run(token, None, f"poll-{minute}")
    return settled


async def settle(deps: WorkerDeps, pending: PendingRun, result: RecordedRun) -> bool:
    """Record `result` for `pending`; take its unit up if it waits for nothing more. False
    if the run was settled already."""
    settled = await deps.workflow_runs().settle(pending.token, result)
    if settled is None:
        return False
    if settled.last and pending.follow:
        await deps.workflow_runs().wake(pending)
    elif settled.last:
        (unit,) = await deps.live_runs().units(pending.run_id, [pending.unit])
        if unit.state is State.TESTING and unit.attempt == pending.attempt:
            await deps.queue.resume_unit(
                pending.run_id, pending.unit, pending.attempt, pending.token
            )
    return True


async def _result(actions: ActionsClient, pending: PendingRun, run: WorkflowRun) -> RecordedRun:
    """What the run's artifact shows; not run, and why, if it shows nothing."""
    test, fix, own = pending.test, pending.fix, pending.own
    try:
        archive = await actions.artifact(pending.ref, run.id, ARTIFACT, MAX_ZIP_BYTES)
    except GitHubError as exc:
        why = f"the workflow's result could not be downloaded: {exc}"
        return not_run(test, fix, why, own=own)
    if archive is None:
        why = f"the workflow run ended {run.conclusion} without a result"
        return not_run(test, fix, why, own=own)
    try:
        result = read_result(archive, pending.token)
    except WorkflowResultError as exc:
        log.warning("workflow run %s: %s", run.id, exc)
        return not_run(test, fix, f"the workflow's result could not be read: {exc}", own=own)
    return shown(test, command_for(pending.command, test), fix, result, own=own)
