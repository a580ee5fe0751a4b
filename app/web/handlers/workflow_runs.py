"""`workflow_run`: a run of a repository's workflow completed; if it is one of Tiebreak's
findings' tests (titled `Tiebreak <token>`), a job takes its result. The handler only queues:
the run and its artifact are read in the job (:mod:`app.jobs.workflow_results`). A run
Tiebreak does not know, or knows no more, is found so there and left alone."""

import re

from app.events import WorkflowRunPayload
from app.telemetry.logs import bind
from app.web.dispatch import Delivery, HandlerDeps, Outcome, WebhookRouter

router = WebhookRouter()

TITLE = re.compile(r"Tiebreak ([0-9a-f]{32})")
"""The title the template gives a run (`app.verification.workflow.RUN_TITLE`)."""


@router.on("workflow_run", "completed")
async def on_workflow_run_completed(delivery: Delivery, deps: HandlerDeps) -> Outcome:
    payload = delivery.parse(WorkflowRunPayload)
    bind(repository=f"{payload.repository.owner.login}/{payload.repository.name}")
    titled = TITLE.fullmatch(payload.workflow_run.display_title)
    if titled is None:
        return Outcome.IGNORED
    run_id = payload.workflow_run.id
    queued = await deps.queue.take_workflow_run(titled[1], run_id, "completed")
    return Outcome.ENQUEUED if queued else Outcome.DUPLICATE
