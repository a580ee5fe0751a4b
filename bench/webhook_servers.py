"""The two servers of the webhook benchmark (`bench.webhooks`), where they listen and with what
secret: Tiebreak's real endpoint and a bare FastAPI endpoint answering 202, each in a child
process (`python -m bench.webhooks --serve real|bare`) on 127.0.0.1."""

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import uvicorn
from fastapi import FastAPI, Response

from app.settings import Settings
from app.telemetry import logs
from app.web import webhooks
from app.web.server import create_app
from tests.fakes.loopback import free_port

HOST = "127.0.0.1"
PATH = webhooks.PATH
SECRET = "bench-webhook-secret"

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 30.0
"""Seconds a server may take to import, start its lifespan and listen."""


class BenchmarkFailed(AssertionError):
    """The run did not do what it claims, so its figures would not mean what they say."""


# -- the servers --------------------------------------------------------------------------------


def bare_app() -> FastAPI:
    """The floor: FastAPI under uvicorn, on the same path, doing nothing but answering."""
    app = FastAPI(docs_url=None, redoc_url=None)

    @app.post(PATH, status_code=202)
    async def acknowledge() -> Response:
        return Response(status_code=202)

    return app


def serve(kind: str, port: int, redis_url: str | None) -> None:
    """Run one server until SIGTERM (the child process's side of :class:`Server`)."""
    if kind == "real":
        if redis_url is None:
            raise BenchmarkFailed("the real endpoint needs --redis-url")
        settings = Settings(github_webhook_secret=SECRET)
        # As `tiebreak web` runs it (app.cli.serving._serve): Tiebreak's JSON log lines, redacted,
        # uvicorn's access log among them, so the figures are production's.
        logs.configure(settings)
        logs.skip_access_lines(PATH)
        config = uvicorn.Config(
            create_app(settings, redis_url), host=HOST, port=port, log_config=None
        )
    else:
        # FastAPI as uvicorn runs it by default, access log included.
        config = uvicorn.Config(bare_app(), host=HOST, port=port, log_level="info")
    asyncio.run(uvicorn.Server(config).serve())


class Server:
    """One server in a child process on 127.0.0.1; use as a context manager."""

    def __init__(self, kind: str, log_dir: Path, redis_url: str | None = None) -> None:
        self.kind = kind
        self.redis_url = redis_url
        self.log_path = log_dir / f"uvicorn-{kind}.log"
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        if self._process is None:
            raise BenchmarkFailed(f"the {self.kind} server is not running")
        return self._process.pid

    def __enter__(self) -> Self:
        self.port = free_port()
        command = [sys.executable, "-m", "bench.webhooks", "--serve", self.kind]
        command += ["--port", str(self.port)]
        if self.redis_url is not None:
            command += ["--redis-url", self.redis_url]
        # A file, not a pipe: nobody reads the access log while the load runs, and a full pipe
        # would stall the server.
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
        try:
            self._wait_until_listening()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()  # uvicorn shuts down gracefully on SIGTERM, lifespan included
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _wait_until_listening(self) -> None:
        # uvicorn runs the lifespan startup (the Redis pool) before it binds: once it accepts a
        # connection, it is ready.
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise BenchmarkFailed(f"the {self.kind} server exited:\n{self.log_tail()}")
            try:
                with socket.create_connection((HOST, self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise BenchmarkFailed(f"the {self.kind} server did not listen within {START_TIMEOUT} s")

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
