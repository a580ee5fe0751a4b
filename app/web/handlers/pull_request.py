"""`pull_request`: a change to review.

Opened, reopened, synchronized (a push) and ready-for-review pull requests are queued; the
review job reads the repository's config (from the base branch) and decides whether that
event, that author and a draft get an automatic review.
"""

from app.events import PullRequestPayload, PullRequestRef
from app.telemetry.logs import bind
from app.web.dispatch import Delivery, DeliveryOutcome, HandlerDeps, WebhookRouter

router = WebhookRouter()


@router.on("pull_request", "opened", "reopened", "synchronize", "ready_for_review", remembers=True)
async def on_pull_request_changed(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(PullRequestPayload)
    ref = PullRequestRef.of(payload)
    bind(repository=ref.full_name, pull_number=ref.number)
    # One round trip: the delivery is remembered as the review is queued.
    enqueued = await deps.queue.enqueue_review(
        ref,
        trigger=payload.action,
        delivery=delivery.id,
        replaces=payload.before,
        base_sha=payload.pull_request.base.sha,
    )
    return DeliveryOutcome.ENQUEUED if enqueued else DeliveryOutcome.DUPLICATE
