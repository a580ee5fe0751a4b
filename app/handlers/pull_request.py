"""`pull_request`: a change to review.

Opened, reopened, synchronized (a push) and ready-for-review pull requests are queued for
review; drafts wait until they are marked ready.
"""

from app.events import PullRequestPayload, PullRequestRef
from app.routing import Delivery, HandlerDeps, Outcome, WebhookRouter

router = WebhookRouter()


@router.on("pull_request", "opened", "reopened", "synchronize", "ready_for_review")
async def on_pull_request_changed(delivery: Delivery, deps: HandlerDeps) -> Outcome:
    payload = delivery.parse(PullRequestPayload)
    if payload.pull_request.draft:
        return Outcome.SKIPPED
    enqueued = await deps.queue.enqueue_review(PullRequestRef.of(payload))
    return Outcome.ENQUEUED if enqueued else Outcome.DUPLICATE
