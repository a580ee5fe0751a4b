"""A unit's journal of model calls (see :mod:`agents.journal`), kept in Redis so that a
fresh attempt on any worker replays what a dead one was answered."""

from redis.asyncio import Redis

from agents.journal import JournalEntry
from app.store.replies import reply


class RedisJournal:
    """One unit's journal (see :mod:`agents.journal`) in a Redis list."""

    def __init__(self, redis: Redis, key: str, *, ttl: int) -> None:
        self.redis = redis
        self.key = key
        self.ttl = ttl

    async def entries(self) -> list[JournalEntry]:
        return [
            JournalEntry.model_validate_json(raw)
            for raw in await reply(self.redis.lrange(self.key, 0, -1))
        ]

    async def append(self, entry: JournalEntry) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(self.key, entry.model_dump_json())
            pipe.expire(self.key, self.ttl)
            await pipe.execute()

    async def truncate(self, keep: int) -> None:
        if keep <= 0:
            await self.redis.delete(self.key)
        else:
            await reply(self.redis.ltrim(self.key, 0, keep - 1))
