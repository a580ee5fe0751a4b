"""What Redis remembers of a repository's learnings (:mod:`policies.learnings`): durable,
numbered in the order they were taught, at most :data:`policies.learnings.MAX_LEARNINGS` per
repository, the oldest dropped past it.

A number, once given, is never given again, even after `/tiebreak forget` or a drop, so the
number a person reads in `/tiebreak learnings` always names the same learning.
"""

import contextlib
from collections.abc import AsyncIterator
from typing import NamedTuple

from pydantic import ValidationError
from redis.asyncio import Redis

from app.store import keys
from app.store.redis_typing import reply
from policies.learnings import MAX_LEARNINGS, Learning

RECORD = """
local number = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], number, ARGV[1])
local dropped = 0
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[2]) then
    dropped = number
    for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
        dropped = math.min(dropped, tonumber(field))
    end
    redis.call('HDEL', KEYS[1], dropped)
end
return {number, dropped}
"""
"""Numbers the learning ARGV[1] (JSON) and keeps it in KEYS[1] with KEYS[2] its last number,
then drops the oldest if more than ARGV[2] are kept; returns the number, and the dropped one's
(0 for none). One script, so two learnings taught at once never share a number or both drop."""


CONNECT_TIMEOUT = 5.0
"""Seconds the CLI waits to reach Redis before it says it cannot."""


class Recorded(NamedTuple):
    """A learning as it was kept, and the oldest one it pushed out, if any."""

    learning: Learning
    dropped: int | None


class LearningStore:
    def __init__(self, redis: Redis, cap: int = MAX_LEARNINGS) -> None:
        self.redis = redis
        self.cap = cap
        self._record = redis.register_script(RECORD)

    @classmethod
    @contextlib.asynccontextmanager
    async def at(cls, url: str) -> AsyncIterator["LearningStore"]:
        """The learnings on the Redis at `url`, on a connection of their own (the CLI's)."""
        redis = Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT)
        try:
            yield cls(redis)
        finally:
            await redis.aclose()

    async def record(self, repository: str, learning: Learning) -> Recorded:
        """Keep `learning` for the repository `owner/repo` under the next number."""
        body = learning.model_dump_json(exclude={"number"})
        number, dropped = await self._record(
            keys=[keys.learnings(repository), keys.learnings_counter(repository)],
            args=[body, self.cap],
        )
        kept = learning.model_copy(update={"number": int(number)})
        return Recorded(kept, int(dropped) or None)

    async def all(self, repository: str) -> list[Learning]:
        """The repository's learnings, most recent first."""
        stored = await reply(self.redis.hgetall(keys.learnings(repository)))
        kept = [_parsed(int(number), body) for number, body in stored.items()]
        return sorted((k for k in kept if k is not None), key=_number, reverse=True)

    async def first_teaching(self, repository: str, thread: int) -> bool:
        """Whether the review thread starting with comment `thread` teaches for the first
        time (True once): a 👎 stays on its comment, and is seen at every later review."""
        key = keys.taught(repository, thread)
        return bool(await self.redis.set(key, "1", nx=True, ex=keys.TAUGHT_TTL))

    async def forget(self, repository: str, number: int) -> bool:
        """Drop learning `number`; False if the repository has none by that number."""
        return bool(await reply(self.redis.hdel(keys.learnings(repository), str(number))))


def _number(learning: Learning) -> int:
    return learning.number or 0


def _parsed(number: int, body: bytes | str) -> Learning | None:
    # A learning kept by an older Tiebreak whose rules it no longer meets is not applied,
    # rather than stopping every review of the repository.
    try:
        return Learning.model_validate_json(body).model_copy(update={"number": number})
    except ValidationError:
        return None
