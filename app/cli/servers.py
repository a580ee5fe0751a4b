"""`tiebreak serve`, `web` and `worker`: the App's processes, on its settings and Redis."""

import asyncio
import contextlib
import logging
from collections.abc import Coroutine

import click
import uvicorn
from pydantic import ValidationError

from app.cli.exits import fail as _fail
from app.jobs.deps import WorkerSetup
from app.jobs.worker import Workers, run_until_signalled
from app.settings import MissingSettings, Settings, SettingsError, env_file, get_settings
from app.store.embedded import EmbeddedRedis, redis_dir
from app.telemetry import logs
from app.web import webhooks
from app.web.server import create_app

log = logging.getLogger(__name__)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
def serve(host: str, port: int) -> None:
    """Run the web server and a worker in one process.

    With REDIS_URL unset, starts an embedded Redis under TIEBREAK_DATA_DIR.
    """
    settings = _settings(web=True, worker=True)
    deps = WorkerSetup.from_settings(settings)
    with contextlib.ExitStack() as stack:
        redis_url = settings.redis_url or _embedded(stack, settings)
        _run_server(_serve(settings, redis_url, host, port, deps))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
def web(host: str, port: int) -> None:
    """Run the web server alone, on the Redis at REDIS_URL."""
    settings = _settings(web=True)
    redis_url = _redis_url(settings)
    _run_server(_serve(settings, redis_url, host, port, None))


@click.command()
def worker() -> None:
    """Run a worker alone, on the Redis at REDIS_URL (run as many as you like)."""
    settings = _settings(worker=True)
    run_until_signalled(WorkerSetup.from_settings(settings), _redis_url(settings))


def _embedded(stack: contextlib.ExitStack, settings: Settings) -> str:
    redis = stack.enter_context(EmbeddedRedis(redis_dir(settings.tiebreak_data_dir)))
    log.info("tiebreak serve's own Redis is at %s (written to %s)", redis.url, redis.address_file)
    return redis.url


def _run_server(server: Coroutine[None, None, None]) -> None:
    # Ctrl-C is how a server stops: uvicorn shuts down, then raises the signal again; it ends
    # the process quietly, not with click's "Aborted!" among the log lines.
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server)


async def _serve(
    settings: Settings, redis_url: str, host: str, port: int, deps: WorkerSetup | None
) -> None:
    # No log config of uvicorn's own: its lines go through the root handler, JSON and redacted.
    # A webhook's answer is logged by its endpoint, with more than the access line would say.
    logs.skip_access_lines(webhooks.PATH)
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, redis_url), host=host, port=port, log_config=None)
    )
    if deps is None:
        await server.serve()
        return
    # uvicorn owns the signals; when it stops, the workers stop, and arq requeues what they ran.
    workers = Workers(deps, redis_url)
    jobs = asyncio.create_task(workers.run())
    try:
        # The server answers once the worker has warmed up: a deploy that waits for /healthz
        # sends its first review to a warm worker, and a Ctrl-C then never finds the parsing
        # processes still starting.
        await workers.warmed.wait()
        await server.serve()
    finally:
        await workers.stop()
        await jobs


def _settings(*, web: bool = False, worker: bool = False) -> Settings:
    try:
        settings = get_settings()
        settings.require(web=web, worker=worker)
        if worker:
            settings.private_key()
    except MissingSettings as exc:
        where = f"the environment or {env_file()}" if env_file() else "the environment"
        _fail(f"{exc}; set them in {where} (`tiebreak setup` writes the App's)")
    except (ValidationError, SettingsError) as exc:
        _fail(str(exc).splitlines()[0])
    logs.configure(settings)
    return settings


def _redis_url(settings: Settings) -> str:
    if settings.redis_url is None:
        _fail("REDIS_URL is not set (only `tiebreak serve` starts its own Redis)")
    return settings.redis_url
