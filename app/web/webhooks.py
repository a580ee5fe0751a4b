"""`POST /api/github/webhooks`: verify, parse, deduplicate, route, enqueue, answer.

Nothing slow happens here: a handler enqueues at most one job, and the answer goes back in
milliseconds. Bad input never gets a 5xx: no valid signature is 401, a body over GitHub's
25 MB cap is 413, anything that is not a JSON object or lacks what its handler needs is 400,
and an event or action Tiebreak does not act on is acknowledged and ignored. The body is read
within the budget and deadline of :mod:`app.web.intake`: past them, 503 or 408. A delivery
Redis cannot take, down or not answering in time, is 503, for GitHub to redeliver. Each answer
is one log line, carrying the delivery's id and event, and its repository and pull request once
a handler has read them (`tiebreak web` writes no uvicorn access line for this path: this one
says more); and it is counted by event and outcome (the event is "unknown" until the
signature is verified, so a forger cannot invent label values).
"""

import logging
import re

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, ValidationError

from app.github.signatures import signed
from app.store.connection import STORE_ERRORS
from app.store.deliveries import Deliveries, Installations
from app.store.queue import ReviewQueue
from app.telemetry.logs import log_context
from app.telemetry.metrics import WEBHOOKS, Metrics
from app.web.dispatch import Delivery, DeliveryOutcome
from app.web.handlers import ROUTER
from app.web.intake import UNKNOWN_EVENT, DeliveryRefused, Intake

log = logging.getLogger(__name__)
router = APIRouter()

PATH = "/api/github/webhooks"


class WebhookContext:
    """What the endpoint needs, built once per process."""

    def __init__(
        self,
        secret: str,
        queue: ReviewQueue,
        metrics: Metrics,
        deliveries: Deliveries,
        installations: Installations,
        intake: Intake,
    ) -> None:
        self.secret = secret
        self.intake = intake
        self.queue = queue
        self.metrics = metrics
        self.deliveries = deliveries
        self.installations = installations


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="ignore")

    action: object = None


async def receive_webhook(request: Request) -> JSONResponse:
    """The endpoint, as a plain Starlette route: FastAPI's dependency and response handling
    would cost more than the rest of a delivery's handling put together."""
    context: WebhookContext = request.app.state.webhooks
    # The ids as the headers claim them: a refused delivery's line says which it was too.
    headers = request.headers
    with log_context(
        delivery_id=headers.get("x-github-delivery"), event=headers.get("x-github-event")
    ):
        event, outcome, response = await _receive(request, context)
    context.metrics.inc(WEBHOOKS, event=event, outcome=outcome)
    return response


async def _receive(request: Request, context: WebhookContext) -> tuple[str, str, JSONResponse]:
    """The delivery's event, the outcome to count, and the answer."""
    try:
        # The body counts against the intake's budget until its delivery is answered.
        async with context.intake.holding(request) as body:
            return await _handle(_verified_delivery(request, context, body), context)
    except DeliveryRefused as refused:
        answer = _answer(refused.status, refused.headers, error=refused.reason)
        return refused.event, refused.outcome, answer


async def _handle(delivery: Delivery, context: WebhookContext) -> tuple[str, str, JSONResponse]:
    """What a verified delivery leads to: its event, the outcome to count, and the answer."""
    event = delivery.event
    if event == "ping":
        return (
            event,
            DeliveryOutcome.PONG,
            _answer(200, outcome=DeliveryOutcome.PONG, delivery=delivery.id),
        )
    handler = ROUTER.handler(delivery)
    if handler is None:
        return (
            event,
            DeliveryOutcome.IGNORED,
            _answer(200, outcome=DeliveryOutcome.IGNORED, delivery=delivery.id),
        )
    # A handler that remembers the delivery itself does so in the round trip that queues its
    # job: nothing of it is remembered unless that job was queued, so nothing is forgotten.
    handler_remembers = ROUTER.remembers(handler)
    try:
        if not handler_remembers and not await context.deliveries.first_sighting(delivery.id):
            answer = _answer(200, outcome=DeliveryOutcome.DUPLICATE, delivery=delivery.id)
            return event, DeliveryOutcome.DUPLICATE, answer
        outcome = await handler(delivery, context)
    except ValidationError as exc:
        await _forget(context, delivery.id, handler_remembers)
        answer = _answer(400, error=f"unexpected {event} payload: {_first(exc)}")
        return event, "bad_request", answer
    except STORE_ERRORS as exc:
        log.warning("webhook %s not queued: %s", delivery.id, exc)
        await _forget(context, delivery.id, handler_remembers)
        return event, "unavailable", _answer(503, error="the queue is unavailable; redeliver later")
    except Exception:
        # The endpoint's catch-all: a bug must not lose the delivery's id for good.
        log.exception("webhook %s (%s) failed", delivery.id, event)
        await _forget(context, delivery.id, handler_remembers)
        return event, "error", _answer(500, error="internal error")
    status = 202 if outcome is DeliveryOutcome.ENQUEUED else 200
    return event, outcome, _answer(status, outcome=outcome, delivery=delivery.id)


def _verified_delivery(request: Request, context: WebhookContext, body: bytes) -> Delivery:
    # Checked before anything is awaited: until then the body is a stranger's (see `Intake`).
    if not signed(context.secret, body, request.headers.get("x-hub-signature-256", "")):
        raise DeliveryRefused(401, "invalid or missing X-Hub-Signature-256", "invalid_signature")
    event = request.headers.get("x-github-event")
    delivery_id = request.headers.get("x-github-delivery")
    if not event or not delivery_id:
        raise DeliveryRefused(
            400,
            "missing X-GitHub-Event or X-GitHub-Delivery",
            "bad_request",
            event=event or UNKNOWN_EVENT,
        )
    action = _leading_action(body)
    if action is not None:
        delivery = Delivery(id=delivery_id, event=event, action=action, body=body)
        if ROUTER.handler(delivery):
            # Its handler parses the whole body (a malformed one is its 400) and acts on it.
            return delivery
    try:
        # pydantic's parser reads only `action` and skips the rest without building objects.
        envelope = _Envelope.model_validate_json(body)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        if error["type"] == "json_invalid":
            raise DeliveryRefused(
                400, f"malformed JSON: {error['msg']}", "bad_request", event=event
            ) from exc
        reason = "the payload is not a JSON object"
        raise DeliveryRefused(400, reason, "bad_request", event=event) from exc
    action = envelope.action if isinstance(envelope.action, str) else None
    return Delivery(id=delivery_id, event=event, action=action, body=body)


_LEADING_ACTION = re.compile(rb'\{\s*"action"\s*:\s*"([a-z_]{1,64})"\s*,')
"""How GitHub starts the body of every event that has an action: its first member."""


def _leading_action(body: bytes) -> str | None:
    """The action, read off the start of a body as GitHub writes it: a delivery with a
    handler is then parsed once, by its handler, rather than twice. None for a body that
    starts otherwise (pretty-printed, the action elsewhere), which is parsed for it."""
    found = _LEADING_ACTION.match(body)
    return None if found is None else found.group(1).decode()


async def _forget(context: WebhookContext, delivery_id: str, handler_remembers: bool) -> None:
    """Let a redelivery of a delivery that was not handled be handled."""
    if handler_remembers:
        return
    try:
        await context.deliveries.forget(delivery_id)
    except STORE_ERRORS as exc:
        log.warning("could not forget delivery %s: %s", delivery_id, exc)


def _answer(status: int, headers: dict[str, str] | None = None, **content: str) -> JSONResponse:
    log.info("webhook answered %s: %s", status, content.get("outcome") or content.get("error"))
    return JSONResponse(status_code=status, content=content, headers=headers)


router.add_route(PATH, receive_webhook, methods=["POST"])


def _first(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
