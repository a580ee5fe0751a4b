"""What Redis remembers of people's replies on finding threads: each taken up once, how many
a pull request has had heard, against the config's cap, and the thread whose reply is being
weighed."""

import contextlib
from collections.abc import AsyncIterator

from arq.connections import ArqRedis

from app.events import PullKey
from app.store import keys
from app.store.caps import count_within
from app.store.locks import held

HEARING_POLL = 0.5
"""Seconds between looks at a thread whose earlier reply is being weighed: a model call takes
seconds, and a person does not notice half of one."""


class Hearings:
    def __init__(self, redis: ArqRedis) -> None:
        self.redis = redis

    async def take_up(self, pull: PullKey, comment_id: int) -> bool:
        """Whether this is the first time the reply `comment_id` is taken up: a redelivery,
        or a second job for the same comment, gets False."""
        first = await self.redis.set(
            keys.reply_seen(pull, comment_id), "1", nx=True, ex=keys.HEARD_TTL
        )
        return bool(first)

    async def within_cap(self, pull: PullKey, cap: int) -> bool:
        """Count one more reply heard on the pull request; False (and not counted) once
        `cap` replies have been."""
        return await count_within(self.redis, keys.replies_heard(pull), cap, keys.HEARD_TTL)

    async def note_cap_once(self, pull: PullKey) -> bool:
        """Whether the note that the cap is reached is still to be posted (True once)."""
        first = await self.redis.set(keys.replies_capped(pull), "1", nx=True, ex=keys.HEARD_TTL)
        return bool(first)

    @contextlib.asynccontextmanager
    async def weighing(self, pull: PullKey, thread: int) -> AsyncIterator[None]:
        """Hold the thread starting with comment `thread` while a reply in it is weighed and
        its verdict lands: a second reply there waits, then finds the finding as the first
        left it (withdrawn, it is not weighed again)."""
        key = keys.hearing(pull, thread)
        async with held(self.redis, key, ttl=keys.HEARING_TTL, poll=HEARING_POLL):
            yield
