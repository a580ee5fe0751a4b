"""What `tiebreak serve`, `web` and `worker` run once their options are read: the App's
processes on its settings and Redis, each checked before anything starts.

The address is bound first, so a port another program holds stops the command at once, having
started nothing; the Redis a worker needs is asked first, so one that does not answer stops it
before the worker warms up. Either says why in one line and exits 2.
"""

import asyncio
import contextlib
import logging
import socket
from collections.abc import Coroutine

import uvicorn
from pydantic import ValidationError

from app.cli.exits import fail
from app.jobs.deps import WorkerSetup
from app.jobs.worker import Workers, run_until_signalled
from app.settings import (
    MissingSettings,
    Settings,
    SettingsError,
    env_file,
    get_settings,
    settings_problem,
)
from app.store.connection import STORE_ERRORS, answering, without_credentials
from app.store.embedded import EmbeddedRedis, EmbeddedRedisError, redis_dir
from app.telemetry import logs
from app.web import webhooks
from app.web.server import create_app

log = logging.getLogger(__name__)

REDIS_TIMEOUT = 10.0
"""Seconds a worker's Redis has to answer before the command gives up on it."""


def serve(host: str, port: int) -> None:
    """The web server and a worker in one process, on REDIS_URL or a Redis of its own."""
    settings = settings_for(web=True, worker=True)
    deps = WorkerSetup.from_settings(settings)
    address = bound(host, port)
    with contextlib.ExitStack() as stack:
        if settings.redis_url is None:
            redis_url = _embedded(stack, settings)
        else:
            redis_url = answering_redis(settings.redis_url)
        _run_server(_serve(settings, redis_url, address, deps))


def web(host: str, port: int) -> None:
    """The web server alone, on REDIS_URL."""
    settings = settings_for(web=True)
    redis_url = _redis_url(settings)
    _run_server(_serve(settings, redis_url, bound(host, port), None))


def worker() -> None:
    """A worker alone, on REDIS_URL."""
    settings = settings_for(worker=True)
    redis_url = answering_redis(_redis_url(settings))
    run_until_signalled(WorkerSetup.from_settings(settings), redis_url)


def bound(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port` for the web server, which listens on it once it starts
    (until then a connection is refused, as by a server not yet up); exit 2 when the address
    cannot be had (taken by another program, or no address of this machine)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # As asyncio's own server would: a restart rebinds at once, an IPv6 address is IPv6 only.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    return sock


def answering_redis(redis_url: str) -> str:
    """`redis_url`, once its Redis answers; exit 2 naming it (without its password) when it
    does not."""
    try:
        asyncio.run(answering(redis_url, REDIS_TIMEOUT))
    except STORE_ERRORS as exc:
        fail(f"cannot reach Redis at {without_credentials(redis_url)}: {exc}")
    return redis_url


def _embedded(stack: contextlib.ExitStack, settings: Settings) -> str:
    """Start `tiebreak serve`'s own Redis, stopped when `stack` closes; exit 2 saying why
    when it cannot start (another `tiebreak serve` on its directory, no redis-server)."""
    where = redis_dir(settings.tiebreak_data_dir)
    try:
        redis = stack.enter_context(EmbeddedRedis(where))
    except EmbeddedRedisError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot start its own Redis in {where}: {exc.strerror or exc}")
    log.info("tiebreak serve's own Redis is at %s (written to %s)", redis.url, redis.address_file)
    return redis.url


def _run_server(server: Coroutine[None, None, None]) -> None:
    # Ctrl-C is how a server stops: uvicorn shuts down, then raises the signal again; it ends
    # the process quietly, not with click's "Aborted!" among the log lines.
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server)


async def _serve(
    settings: Settings, redis_url: str, address: socket.socket, deps: WorkerSetup | None
) -> None:
    # No log config of uvicorn's own: its lines go through the root handler, JSON and redacted.
    # A webhook's answer is logged by its endpoint, with more than the access line would say.
    logs.skip_access_lines(webhooks.PATH)
    server = uvicorn.Server(uvicorn.Config(create_app(settings, redis_url), log_config=None))
    host, port = address.getsockname()[:2]
    if deps is None:
        log.info("listening on %s port %d", host, port)
        await server.serve(sockets=[address])
        return
    # uvicorn owns the signals; when it stops, the workers stop, and arq requeues what they ran.
    workers = Workers(deps, redis_url)
    jobs = asyncio.create_task(workers.run())
    try:
        # The server answers once the worker has warmed up: a deploy that waits for /healthz
        # sends its first review to a warm worker, and a Ctrl-C then never finds the parsing
        # processes still starting.
        await workers.warmed.wait()
        log.info("listening on %s port %d", host, port)
        await server.serve(sockets=[address])
    finally:
        await workers.stop()
        await jobs


def settings_for(*, web: bool = False, worker: bool = False) -> Settings:
    """The settings, with what a web server or a worker needs; exit 2 naming what is missing
    or wrong."""
    try:
        settings = get_settings()
        settings.require(web=web, worker=worker)
        if worker:
            settings.private_key()
    except MissingSettings as exc:
        where = f"the environment or {env_file()}" if env_file() else "the environment"
        fail(f"{exc}; set them in {where} (`tiebreak setup` writes the App's)")
    except ValidationError as exc:
        fail(settings_problem(exc))
    except SettingsError as exc:
        fail(str(exc).splitlines()[0])
    logs.configure(settings)
    return settings


def _redis_url(settings: Settings) -> str:
    if settings.redis_url is None:
        fail("REDIS_URL is not set (only `tiebreak serve` starts its own Redis)")
    return settings.redis_url
