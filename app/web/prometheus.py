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

from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from pydantic import SecretStr

from app.store.connection import STORE_ERRORS
from app.store.counters import FleetCounters
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from app.store.records import State
from app.telemetry.metrics import COUNTERS, Counts, Metrics

SCRAPE_TIMEOUT = 5.0
"""Seconds a scrape may wait for Redis before it answers 503."""

JOB_STATES = ("queued", "deferred", "in_progress")

LIVE_STATES = (State.INITIALIZING, State.ACTIVE, State.WAITING, State.TESTING, State.COMPLETING)
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

    queue: ReviewQueue
    counters: FleetCounters
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
        await self.counters.flush(self.metrics)
        counts = await self.counters.totals()
        jobs = await self.queue.job_states()
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
    except STORE_ERRORS:
        return PlainTextResponse("redis unreachable\n", status_code=503)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(snapshot))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


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
