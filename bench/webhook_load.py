"""The load of the webhook benchmark (`bench.webhooks`): signed `pull_request` deliveries, each
enqueuing its own review job, and the clients that keep a number of them in flight, one per
keep-alive connection, measuring every answer's latency and the CPU the phase took."""

import asyncio
import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
import redis

from app.events import PullRequestPayload, PullRequestRef
from app.store.keys import review_job_id
from bench.webhook_servers import HOST, PATH, SECRET, BenchmarkFailed, Server
from tests.scenarios.webhooks import payload, signed

REQUEST_TIMEOUT = 10.0
PHASE_TIMEOUT = 180.0
"""Seconds one load phase (warm-up and measured) may take before the run gives up."""


# -- the deliveries -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Delivery:
    id: str
    body: bytes
    headers: dict[str, str]
    job_id: str
    """The arq job the real endpoint must enqueue for it."""
    request: bytes
    """The whole HTTP/1.1 request, as :class:`RawSender` sends it."""


def _request(body: bytes, headers: dict[str, str]) -> bytes:
    fields = {"Host": HOST, **headers, "Content-Length": str(len(body))}
    head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    return f"POST {PATH} HTTP/1.1\r\n{head}\r\n".encode() + body


def deliveries(count: int) -> list[Delivery]:
    """`count` signed `pull_request.opened` deliveries, each for another pull request and head.

    A distinct pull number keeps every delivery on its own pull request, so none supersedes
    another (which would add an abort to its enqueue) and each enqueues exactly one job.
    """
    template = payload("pull_request/opened")
    made = []
    for n in range(1, count + 1):
        sha = hashlib.sha1(f"tiebreak-bench-{n}".encode()).hexdigest()
        template["number"] = template["pull_request"]["number"] = n
        template["pull_request"]["head"]["sha"] = sha
        raw, headers = signed(
            "pull_request", json.dumps(template).encode(), delivery=f"bench-{n}", secret=SECRET
        )
        # The job id as the app derives it, so a payload change cannot make the check vacuous.
        ref = PullRequestRef.of(PullRequestPayload.model_validate(template))
        job_id = review_job_id(ref)
        made.append(
            Delivery(headers["X-GitHub-Delivery"], raw, headers, job_id, _request(raw, headers))
        )
    return made


# -- the load -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    """The HTTP status, or 0 if the request failed without one."""
    body: bytes
    seconds: float


@dataclass(frozen=True, slots=True)
class Cpu:
    """CPU seconds spent during the measured phase, where known."""

    server: float | None
    redis: float | None
    client: float


@dataclass(frozen=True, slots=True)
class Phase:
    answers: list[Answer]
    wall: float


class Sender(Protocol):
    """One keep-alive connection's worth of client: sends a delivery, returns the answer."""

    async def post(self, delivery: Delivery) -> tuple[int, bytes]: ...

    async def aclose(self) -> None: ...


class RawSender:
    """A minimal HTTP/1.1 client on one keep-alive connection, on asyncio streams.

    The default load client, because it costs about 0.1 ms of CPU per request where httpx
    costs 1 to 6 ms: with httpx the client, not the server, saturates a small machine, and
    both endpoints would measure mostly httpx (see `--client httpx`).
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, delivery: Delivery) -> tuple[int, bytes]:
        if self._streams is None:
            self._streams = await asyncio.open_connection(HOST, self.port)
        reader, writer = self._streams
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT):
                writer.write(delivery.request)
                return await self._answer(reader)
        except BaseException:
            # A connection in an unknown state serves no further request; the next one opens
            # a fresh connection.
            await self.aclose()
            raise

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[int, bytes]:
        status_line = await reader.readuntil(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        length = None
        while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
            elif name.strip().lower() == b"connection" and value.strip().lower() == b"close":
                raise ConnectionError("the server closed a keep-alive connection")
        if length is None:
            raise ConnectionError(f"an answer without Content-Length: {status_line!r}")
        return status, await reader.readexactly(length)

    async def aclose(self) -> None:
        streams, self._streams = self._streams, None
        if streams is not None:
            streams[1].close()
            with contextlib.suppress(OSError):
                await streams[1].wait_closed()


class HttpxSender:
    """httpx, one client of one connection per sender.

    One client per connection, because one shared pool of 32 connections cost about 6 ms of
    client CPU per request here, against about 1 ms like this.
    """

    def __init__(self, port: int) -> None:
        # trust_env=False: no proxy from the environment may stand between client and server.
        self._client = httpx.AsyncClient(
            base_url=f"http://{HOST}:{port}",
            limits=httpx.Limits(max_connections=1),
            timeout=REQUEST_TIMEOUT,
            trust_env=False,
        )

    async def post(self, delivery: Delivery) -> tuple[int, bytes]:
        response = await self._client.post(PATH, content=delivery.body, headers=delivery.headers)
        return response.status_code, response.content

    async def aclose(self) -> None:
        await self._client.aclose()


CLIENTS: dict[str, Callable[[int], Sender]] = {"raw": RawSender, "httpx": HttpxSender}


async def _send(senders: Sequence[Sender], batch: Sequence[Delivery]) -> Phase:
    """Send `batch` with one request in flight per sender; the answers in `batch`'s order."""
    answers: list[Answer | None] = [None] * len(batch)
    pending = iter(range(len(batch)))

    async def closed_loop(sender: Sender) -> None:
        # The next request leaves when the last answer is in, as with GitHub's retrying hooks.
        for i in pending:
            start = time.perf_counter()
            try:
                status, body = await sender.post(batch[i])
            except (OSError, EOFError, ValueError, TimeoutError, httpx.HTTPError) as exc:
                # Recorded, not raised: the checks report every failure, by status, at the end.
                status, body = 0, repr(exc).encode()
            answers[i] = Answer(status, body, time.perf_counter() - start)

    start = time.perf_counter()
    async with asyncio.timeout(PHASE_TIMEOUT):
        await asyncio.gather(*(closed_loop(sender) for sender in senders))
    wall = time.perf_counter() - start
    done = [a for a in answers if a is not None]
    if len(done) != len(batch):
        raise BenchmarkFailed(f"{len(batch) - len(done)} requests were never sent")
    return Phase(done, wall)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU a process has used so far (Linux only; None elsewhere)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Fields after the command name, which is in parentheses and may hold spaces.
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _redis_cpu(url: str | None) -> float | None:
    if url is None:
        return None
    with redis.Redis.from_url(url) as client:
        info: dict[str, Any] = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _minus(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


async def load(
    server: Server,
    client: str,
    warmup: Sequence[Delivery],
    measured: Sequence[Delivery],
    concurrency: int,
) -> tuple[Phase, Phase, Cpu]:
    senders = [CLIENTS[client](server.port) for _ in range(concurrency)]
    try:
        # The warm-up opens every connection and runs every code path once, unmeasured.
        warm = await _send(senders, warmup)
        server_cpu, redis_cpu = cpu_seconds(server.pid), _redis_cpu(server.redis_url)
        client_cpu = time.process_time()
        phase = await _send(senders, measured)
        cpu = Cpu(
            server=_minus(cpu_seconds(server.pid), server_cpu),
            redis=_minus(_redis_cpu(server.redis_url), redis_cpu),
            client=time.process_time() - client_cpu,
        )
    finally:
        for sender in senders:
            await sender.aclose()
    return warm, phase, cpu
