"""Short locks in Redis, for work on one pull request that must not interleave.

A lock is redis-py's :class:`~redis.asyncio.lock.Lock`: taken by `SET NX` with a random token
and a time to live, released by a script that deletes it only if it still holds that token.
The time to live is what a worker that died holding a lock costs the others: they wait at
most that long. Waiting is by polling every `poll` seconds, one round trip each, so a lock
held for a model call is polled slowly and one held for a few writes quickly.
"""

import contextlib
import logging
from collections.abc import AsyncIterator

from redis.asyncio import Redis
from redis.exceptions import LockNotOwnedError

from policies.errors import TiebreakError

log = logging.getLogger(__name__)


class LockTimeout(TiebreakError):
    """A lock stayed taken, by one holder or by one after another, for longer than one holder
    may keep it."""


@contextlib.asynccontextmanager
async def held(redis: Redis, key: str, *, ttl: int, poll: float) -> AsyncIterator[None]:
    """Hold the lock `key` for the block, waiting for it first if someone else holds it.

    Raises :class:`LockTimeout` if it could not be taken within `ttl` seconds. A block that
    outlives `ttl` loses the lock without noticing; the release then says so in the log.
    """
    lock = redis.lock(key, timeout=ttl, sleep=poll, blocking_timeout=ttl, thread_local=False)
    if not await lock.acquire():
        raise LockTimeout(f"{key} stayed taken for more than {ttl} seconds")
    try:
        yield
    finally:
        try:
            await lock.release()
        except LockNotOwnedError:
            log.warning("%s was held past its %d seconds and taken by another", key, ttl)
