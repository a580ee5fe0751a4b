"""The fleet's counters: counted in each process, added up in Redis.

Tiebreak runs as several processes (web servers, workers on other hosts) on one Redis, and
`GET /metrics` on any web server reports them all. Each process counts in memory —
:meth:`Metrics.inc` does no I/O, so counting never slows a webhook or a job — and adds what it
counted to one Redis hash every few seconds and once more as it stops (:meth:`Metrics.flushing`).
A flush that fails keeps its counts for the next one.

    tiebreak:metrics   hash   field: a counter and its labels (JSON); value: the fleet's total

Labels carry no repository, user or other private or unbounded value.
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.store.replies import reply, text

METRICS_KEY = "tiebreak:metrics"

FLUSH_EVERY = 5.0
"""Seconds between one process's flushes."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Counter:
    """A counter's definition: its name, what it counts and the labels each count carries."""

    name: str
    help: str
    labels: tuple[str, ...] = ()


WEBHOOKS = Counter(
    "tiebreak_webhooks_total",
    "Webhook deliveries answered, by event (unknown before the signature is verified) and "
    "outcome (enqueued, recorded, skipped, ignored, duplicate, pong; invalid_signature, "
    "too_large, bad_request, unavailable, error).",
    ("event", "outcome"),
)
JOBS = Counter(
    "tiebreak_jobs_total",
    "Queue jobs that ran to an end, by function and outcome (completed, failed, cancelled).",
    ("function", "outcome"),
)
LLM_CALLS = Counter(
    "tiebreak_llm_calls_total",
    "Model calls made (journal replays excluded), by role and outcome (ok, error).",
    ("role", "outcome"),
)
LLM_TOKENS = Counter(
    "tiebreak_llm_tokens_total",
    "Tokens of the model calls made, by role and kind: uncached (input not from the cache), "
    "cache_write, cache_read, output.",
    ("role", "kind"),
)
DEBATES = Counter(
    "tiebreak_debates_total",
    "Findings debated, by the consensus they ended with.",
    ("consensus",),
)
ARBITRATIONS = Counter(
    "tiebreak_arbitrations_total",
    "Findings sent to the arbiter, by what sent them.",
    ("trigger",),
)
LOOP_DETECTIONS = Counter(
    "tiebreak_loop_detections_total",
    "Findings whose thread was caught looping (a repeated or oscillating message).",
)
BUDGET_EXHAUSTIONS = Counter(
    "tiebreak_budget_exhaustions_total",
    "Pairwise budgets (one per edge of a debate) that ran out: spent, or dropped to zero for "
    "a repeated answer.",
)
GITHUB_API_ERRORS = Counter(
    "tiebreak_github_api_errors_total",
    "Failed GitHub API requests, each attempt of a retried call counted, by status "
    "(transport: a timeout or a failed connection; other: refused before it was sent). "
    "Includes answers Tiebreak expects and handles, such as 404 for a repository without a "
    "config file.",
    ("status",),
)

COUNTERS = (
    WEBHOOKS,
    JOBS,
    LLM_CALLS,
    LLM_TOKENS,
    DEBATES,
    ARBITRATIONS,
    LOOP_DETECTIONS,
    BUDGET_EXHAUSTIONS,
    GITHUB_API_ERRORS,
)

Labels = tuple[str, ...]
"""A count's label values, in the order of its counter's labels."""

Counts = dict[str, dict[Labels, int]]
"""Totals by counter name, then by label values."""


class Metrics:
    """One process's counts not yet added to the fleet's. Used from one event loop."""

    def __init__(self) -> None:
        self._pending: dict[str, int] = {}

    def inc(self, counter: Counter, amount: int = 1, **labels: str) -> None:
        """Count `amount` more for `counter` with these labels (all of its labels)."""
        if amount < 0:
            raise ValueError(f"{counter.name} only goes up")
        if labels.keys() != set(counter.labels):
            raise ValueError(f"{counter.name} takes labels {counter.labels}, not {tuple(labels)}")
        if amount:
            field = _field(counter.name, labels)
            self._pending[field] = self._pending.get(field, 0) + amount

    def pending(self) -> Counts:
        """What this process counted and has yet to flush."""
        return _decoded(self._pending)

    async def flush(self, redis: Redis) -> bool:
        """Add the pending counts to the fleet's, in one transaction; on failure keep them
        for the next flush and log why. Return whether they were added."""
        taken, self._pending = self._pending, {}
        if not taken:
            return True
        try:
            async with redis.pipeline(transaction=True) as pipe:
                for field, amount in taken.items():
                    pipe.hincrby(METRICS_KEY, field, amount)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            self._keep(taken)
            log.warning("metrics not flushed (kept for the next flush): %s", exc)
            return False
        except asyncio.CancelledError:
            self._keep(taken)
            raise
        return True

    @contextlib.asynccontextmanager
    async def flushing(self, redis: Redis, every: float = FLUSH_EVERY) -> AsyncIterator[None]:
        """Flush every `every` seconds while the block runs, and once more as it ends."""
        stop = asyncio.Event()

        async def flush_until_stopped() -> None:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), every)
                await self.flush(redis)

        flusher = asyncio.create_task(flush_until_stopped())
        try:
            yield
        finally:
            stop.set()
            await flusher

    def _keep(self, counts: Mapping[str, int]) -> None:
        for field, amount in counts.items():
            self._pending[field] = self._pending.get(field, 0) + amount


async def fleet_counts(redis: Redis) -> Counts:
    """Every process's flushed counts, added up. Fields this version does not know (written
    by a newer one during a rolling deploy) are left out."""
    raw = await reply(redis.hgetall(METRICS_KEY))
    return _decoded({text(k): int(v) for k, v in raw.items() if text(v).lstrip("-").isdigit()})


def _field(name: str, labels: Mapping[str, str]) -> str:
    """The hash field of a count: the same for the same labels in any order."""
    return json.dumps([name, sorted((k, str(v)) for k, v in labels.items())])


_BY_NAME = {counter.name: counter for counter in COUNTERS}


def _decoded(fields: Mapping[str, int]) -> Counts:
    counts: Counts = {}
    for field, value in fields.items():
        try:
            name, pairs = json.loads(field)
            labels = dict(pairs)
        except (ValueError, TypeError):
            continue
        counter = _BY_NAME.get(name)
        if counter is None or labels.keys() != set(counter.labels):
            continue
        values = tuple(str(labels[label]) for label in counter.labels)
        counts.setdefault(name, {})[values] = value
    return counts
