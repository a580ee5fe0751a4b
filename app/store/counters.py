"""The fleet's counters in Redis: each process adds what it counted, every scrape reads the sum.

A process flushes its :class:`app.telemetry.metrics.Metrics` every few seconds and once more as
it stops (:meth:`FleetCounters.flushing`), in one transaction; a flush that fails keeps its
counts for the next one.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.store.keys import METRICS
from app.store.redis_typing import reply, text
from app.telemetry.metrics import Counts, Metrics, decoded

FLUSH_EVERY = 5.0
"""Seconds between one process's flushes."""

log = logging.getLogger(__name__)


class FleetCounters:
    """The counts of every process of the fleet, added up in one Redis hash."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def flush(self, metrics: Metrics) -> bool:
        """Add the process's pending counts to the fleet's, in one transaction; on failure
        keep them for the next flush and log why. Return whether they were added."""
        taken = metrics.take()
        if not taken:
            return True
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                for key, amount in taken.items():
                    pipe.hincrby(METRICS, key, amount)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            metrics.keep(taken)
            log.warning("metrics not flushed (kept for the next flush): %s", exc)
            return False
        except asyncio.CancelledError:
            metrics.keep(taken)
            raise
        return True

    @contextlib.asynccontextmanager
    async def flushing(self, metrics: Metrics, every: float = FLUSH_EVERY) -> AsyncIterator[None]:
        """Flush every `every` seconds while the block runs, and once more as it ends."""
        stop = asyncio.Event()

        async def flush_until_stopped() -> None:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), every)
                await self.flush(metrics)

        flusher = asyncio.create_task(flush_until_stopped())
        try:
            yield
        finally:
            stop.set()
            await flusher

    async def totals(self) -> Counts:
        """Every process's flushed counts, added up."""
        raw = await reply(self.redis.hgetall(METRICS))
        return decoded({text(k): int(v) for k, v in raw.items() if text(v).lstrip("-").isdigit()})
