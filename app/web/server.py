"""The web server: the webhook endpoint, the transcript pages, the metrics and the health
checks, on one Redis pool."""

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from app.links import links_for
from app.settings import Settings, SettingsError
from app.store.connection import STORE_ERRORS, Pool, connect
from app.store.counters import FleetCounters
from app.store.deliveries import Deliveries, Installations
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from app.store.transcripts import TranscriptStore
from app.telemetry.metrics import Metrics
from app.web import prometheus, transcript_page, webhooks
from app.web.intake import Intake

READY_TIMEOUT = 2.0
REDIS_TIMEOUT = 2.0
"""Seconds the server waits for Redis to connect or to answer any one call. Its calls take
well under a millisecond; one that waits longer finds Redis stalled, and fails (a webhook
delivery is answered 503, to be redelivered) rather than waiting for it. A delivery makes at
most two calls that can wait this long (the first that fails, and forgetting the delivery),
so it is answered well within the 10 seconds GitHub waits for it."""
MiB = 1024 * 1024

log = logging.getLogger(__name__)


def create_app(settings: Settings, redis_url: str) -> FastAPI:
    """The ASGI app. Refuses to start without a webhook secret."""
    settings.require(web=True)
    secret = settings.github_webhook_secret
    if secret is None:  # `require` made sure; this keeps the type checker informed
        raise SettingsError("GITHUB_WEBHOOK_SECRET is not set")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        redis = connect(redis_url, timeout=REDIS_TIMEOUT)
        metrics, counters = Metrics(), FleetCounters(redis)
        _serve_state(app, settings, secret.get_secret_value(), redis, metrics, counters)
        # What was made so far (the app, its settings, the libraries' modules) lives as long as
        # the process: kept out of the garbage collector's full passes, which would otherwise
        # walk it all, pausing every request in flight.
        gc.freeze()
        try:
            async with counters.flushing(metrics):
                yield
        finally:
            await redis.aclose()

    # No API documentation is served: the schema would only tell a stranger what to try.
    app = FastAPI(
        title="Tiebreak", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )
    app.include_router(webhooks.router)
    app.include_router(transcript_page.router)
    app.include_router(prometheus.router)
    app.include_router(_probes)
    return app


def _serve_state(
    app: FastAPI,
    settings: Settings,
    secret: str,
    redis: Pool,
    metrics: Metrics,
    counters: FleetCounters,
) -> None:
    """What the routes find on `app.state`, made on one Redis pool as the app starts."""
    queue = ReviewQueue(redis)
    intake = Intake(
        settings.tiebreak_webhook_buffer_mb * MiB, settings.tiebreak_webhook_read_timeout
    )
    app.state.webhooks = webhooks.WebhookContext(
        secret, queue, metrics, Deliveries(redis), Installations(redis), intake
    )
    app.state.exposition = prometheus.Exposition(
        queue,
        counters,
        metrics,
        settings.tiebreak_metrics_token,
        LiveRuns(redis, settings.tiebreak_heartbeat),
    )
    app.state.transcripts = transcript_page.TranscriptPages(
        TranscriptStore(redis, settings.tiebreak_transcript_retention), links_for(settings)
    )


_probes = APIRouter()


@_probes.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@_probes.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    context: webhooks.WebhookContext = request.app.state.webhooks
    try:
        await asyncio.wait_for(context.queue.ping(), READY_TIMEOUT)
    except STORE_ERRORS as exc:
        # What failed is for the operator's logs, not for whoever asks.
        log.warning("not ready: Redis did not answer: %s", exc)
        return JSONResponse(status_code=503, content={"status": "redis unreachable"})
    return JSONResponse(content={"status": "ready"})
