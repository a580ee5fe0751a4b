"""The web server: the webhook endpoint, the transcript pages, the metrics and the health
checks, on one Redis pool."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from arq import create_pool
from arq.connections import RedisSettings
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from redis.exceptions import RedisError

from app.links import links_for
from app.settings import Settings, SettingsError
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from app.store.transcripts import TranscriptStore
from app.telemetry.metrics import Metrics
from app.web import prometheus, transcript_page, webhooks

READY_TIMEOUT = 2.0


def redis_settings(url: str) -> RedisSettings:
    return RedisSettings.from_dsn(url)


def create_app(settings: Settings, redis_url: str) -> FastAPI:
    """The ASGI app. Refuses to start without a webhook secret."""
    settings.require(web=True)
    secret = settings.github_webhook_secret
    if secret is None:  # `require` made sure; this keeps the type checker informed
        raise SettingsError("GITHUB_WEBHOOK_SECRET is not set")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        redis = await create_pool(redis_settings(redis_url))
        metrics = Metrics()
        app.state.webhooks = webhooks.WebhookContext(
            secret.get_secret_value(), ReviewQueue(redis), metrics
        )
        app.state.exposition = prometheus.Exposition(
            redis,
            metrics,
            settings.tiebreak_metrics_token,
            LiveRuns(redis, settings.tiebreak_heartbeat),
        )
        app.state.transcripts = transcript_page.TranscriptPages(
            TranscriptStore(redis, settings.tiebreak_transcript_retention), links_for(settings)
        )
        try:
            async with metrics.flushing(redis):
                yield
        finally:
            await redis.aclose()

    app = FastAPI(title="Tiebreak", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.include_router(webhooks.router)
    app.include_router(transcript_page.router)
    app.include_router(prometheus.router)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz(request: Request) -> JSONResponse:
        context: webhooks.WebhookContext = request.app.state.webhooks
        try:
            await asyncio.wait_for(context.queue.redis.ping(), READY_TIMEOUT)
        except (RedisError, OSError, TimeoutError) as exc:
            return JSONResponse(
                status_code=503, content={"status": "redis unreachable", "error": str(exc)}
            )
        return JSONResponse(content={"status": "ready"})

    return app
