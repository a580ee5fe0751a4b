"""`GET /metrics`: the fleet's counters and the queues' state, in Prometheus' text format.

The counters are every process's, added up in Redis (:mod:`app.telemetry.metrics`); the gauges
are read from Redis as the scrape happens: the jobs in each arq queue by state, and the live
review runs by state. A scrape first flushes this process's own counts, so it is never behind
them. With `TIEBREAK_METRICS_TOKEN` set, a scrape must bring it as a bearer token. Redis
unreachable is a 503, never a 500.
"""

import asyncio
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated

from arq.constants import in_progress_key_prefix
from arq.utils import timestamp_ms
from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from pydantic import SecretStr
from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.store.live import LiveRuns, State
from app.store.queue import REVIEW_QUEUE, UNIT_QUEUE
from app.store.replies import text
from app.telemetry.metrics import COUNTERS, Counts, Metrics, fleet_counts

SCRAPE_TIMEOUT = 5.0
"""Seconds a scrape may wait for Redis before it answers 503."""

QUEUES = {"reviews": REVIEW_QUEUE, "units": UNIT_QUEUE}
"""The arq queues, by the name their gauges carry."""

JOB_STATES = ("queued", "deferred", "in_progress")

IN_PROGRESS_LOOKS = 1000
"""Ready jobs per queue checked for arq's in-progress key. Workers take ready jobs oldest
first, so the running ones are among the first; this bounds a scrape's cost when a queue is
long."""

LIVE_STATES = (State.INITIALIZING, State.ACTIVE, State.WAITING, State.COMPLETING)
"""The states a live run can be in (an ended run is no longer listed as live)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    counts: Counts
    jobs: dict[str, dict[str, int]]
    """Jobs by queue, then by state."""
    live_runs: dict[State, int]


@dataclass(frozen=True, slots=True)
class Exposition:
    """What the endpoint needs, built once per process."""

    redis: Redis
    metrics: Metrics
    """This process's own counts."""
    token: SecretStr | None
    live: LiveRuns

    def allows(self, authorization: str | None) -> bool:
        if self.token is None:
            return True
        scheme, _, given = (authorization or "").partition(" ")
        expected = self.token.get_secret_value().encode()
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), expected)

    async def snapshot(self) -> Snapshot:
        await self.metrics.flush(self.redis)
        counts = await fleet_counts(self.redis)
        jobs = await queued_jobs(self.redis)
        states = await self.live.run_states()
        live = {state: sum(1 for s in states if s is state) for state in LIVE_STATES}
        return Snapshot(counts, jobs, live)


async def get_exposition(request: Request) -> Exposition:
    exposition: Exposition = request.app.state.exposition
    return exposition


ExpositionDep = Annotated[Exposition, Depends(get_exposition)]

router = APIRouter()


@router.get("/metrics")
async def scrape(request: Request, exposition: ExpositionDep) -> Response:
    if not exposition.allows(request.headers.get("authorization")):
        return PlainTextResponse(
            "a valid bearer token is required\n",
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    try:
        snapshot = await asyncio.wait_for(exposition.snapshot(), SCRAPE_TIMEOUT)
    except (RedisError, OSError, TimeoutError):
        return PlainTextResponse("redis unreachable\n", status_code=503)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(snapshot))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


async def queued_jobs(redis: Redis) -> dict[str, dict[str, int]]:
    """The jobs of each queue by state: ready and waiting for a worker (queued), scheduled
    for later (deferred), or running (arq's in-progress key is set)."""
    now = timestamp_ms()
    async with redis.pipeline(transaction=True) as pipe:
        for key in QUEUES.values():
            pipe.zcount(key, "-inf", now)
            pipe.zcount(key, f"({now}", "+inf")
            pipe.zrangebyscore(key, "-inf", now, start=0, num=IN_PROGRESS_LOOKS)
        replies = await pipe.execute()
    ready = dict(zip(QUEUES, replies[0::3], strict=True))
    deferred = dict(zip(QUEUES, replies[1::3], strict=True))
    looked: dict[str, list[str]] = {
        queue: [text(job) for job in jobs]
        for queue, jobs in zip(QUEUES, replies[2::3], strict=True)
    }
    async with redis.pipeline(transaction=False) as pipe:
        for jobs in looked.values():
            for job in jobs:
                pipe.exists(in_progress_key_prefix + job)
        running = iter(await pipe.execute())
    states = {}
    for queue, jobs in looked.items():
        in_progress = sum(1 for _ in jobs if next(running))
        states[queue] = {
            "queued": max(0, int(ready[queue]) - in_progress),
            "deferred": int(deferred[queue]),
            "in_progress": in_progress,
        }
    return states


class _Collector:
    """The snapshot as metric families."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterable[Metric]:
        yield from _counters(self.snapshot.counts)
        jobs = self.snapshot.jobs
        depth = GaugeMetricFamily(
            "tiebreak_queue_depth",
            "Jobs waiting in each queue for a worker, ready or deferred.",
            labels=("queue",),
        )
        by_state = GaugeMetricFamily(
            "tiebreak_queue_jobs",
            "Jobs in each queue by state: queued (ready), deferred (scheduled for later), "
            "in_progress (running on a worker).",
            labels=("queue", "state"),
        )
        for queue, states in jobs.items():
            depth.add_metric([queue], states["queued"] + states["deferred"])
            for state in JOB_STATES:
                by_state.add_metric([queue, state], states[state])
        live = GaugeMetricFamily(
            "tiebreak_live_runs",
            "Review runs under way, by their coordinator's state.",
            labels=("state",),
        )
        for state, runs in self.snapshot.live_runs.items():
            live.add_metric([state.value], runs)
        yield from (depth, by_state, live)


def _counters(counts: Counts) -> Iterable[Metric]:
    for counter in COUNTERS:
        family = CounterMetricFamily(counter.name, counter.help, labels=counter.labels)
        values: Mapping[tuple[str, ...], int] = counts.get(counter.name, {})
        if not counter.labels and not values:
            values = {(): 0}  # an unlabelled counter shows from the start
        for labels, value in sorted(values.items()):
            family.add_metric(labels, value)
        yield family
