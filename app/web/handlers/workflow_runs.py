"""`workflow_run`: a run of a repository's workflow completed; if it is titled as Tiebreak
titles its findings' tests (`Tiebreak <token>`), a job looks at it. The handler only queues,
once per run however often GitHub delivers it: a title is no proof, since anyone may give a
run that title, so another run titled alike must not make the run Tiebreak dispatched a
duplicate. The job (:mod:`app.jobs.workflow_results`) drops a run of another installation or
repository, or one that is not the run Tiebreak dispatched, and leaves alone a token it does
not know, or knows no more."""

import re

from app.events import CompletedRun, WorkflowRunPayload
from app.telemetry.logs import bind
from app.web.dispatch import Delivery, DeliveryOutcome, HandlerDeps, WebhookRouter

router = WebhookRouter()

TITLE = re.compile(r"Tiebreak ([0-9a-f]{32})")
"""The title the template gives a run (`app.verification.workflow.RUN_TITLE`)."""


@router.on("workflow_run", "completed")
async def on_workflow_run_completed(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(WorkflowRunPayload)
    bind(repository=f"{payload.repository.owner.login}/{payload.repository.name}")
    titled = TITLE.fullmatch(payload.workflow_run.display_title)
    if titled is None:
        return DeliveryOutcome.IGNORED
    run = CompletedRun.of(payload)
    queued = await deps.queue.take_workflow_run(titled[1], run, f"run-{run.run_id}")
    return DeliveryOutcome.ENQUEUED if queued else DeliveryOutcome.DUPLICATE
