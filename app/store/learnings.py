"""What Redis remembers of a repository's learnings (:mod:`policies.learnings`): durable,
numbered in the order they were taught, at most :data:`policies.learnings.MAX_LEARNINGS` per
repository, the oldest dropped past it; and those a pull request keeps for itself alone, for
a while, numbered among them.

A repository is known by GitHub's id for it, never by its name, which another repository may
take after it is deleted. A number, once given, is never given again, even after `/tiebreak
forget` or a drop, so the number a person reads in `/tiebreak learnings` always names the same
learning. Learnings an older Tiebreak kept under a repository's name stay where they are until
a repository of that name shows them its own (:mod:`app.review.teaching`), and are then moved
under its id whole, numbers and all (:meth:`LearningStore.adopt`).
"""

import contextlib
import re
from collections.abc import AsyncIterator
from typing import NamedTuple

from pydantic import ValidationError
from redis.asyncio import Redis

from app.store import keys
from app.store.redis_typing import reply, text
from policies.learnings import MAX_LEARNINGS, MAX_PULL_LEARNINGS, Learning

RECORD = """
local number = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], number, ARGV[1])
if tonumber(ARGV[3]) > 0 then
    redis.call('EXPIRE', KEYS[1], ARGV[3])
end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
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
"""Numbers the learning ARGV[1] (JSON) with the counter KEYS[2] and keeps it in KEYS[1] (for
ARGV[3] seconds, if not 0), notes the repository's name ARGV[4] as id ARGV[5] in KEYS[3], then
drops the oldest if more than ARGV[2] are kept; returns the number, and the dropped one's (0
for none). One script, so two learnings taught at once never share a number or both drop."""

ADOPT = """
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[4]) == 1 then
    return 0
end
if redis.call('EXISTS', KEYS[1]) == 0 then
    return 0
end
redis.call('RENAME', KEYS[1], KEYS[3])
if redis.call('EXISTS', KEYS[2]) == 1 then
    redis.call('RENAME', KEYS[2], KEYS[4])
end
redis.call('HSET', KEYS[5], ARGV[1], ARGV[2])
return 1
"""
"""Moves the learnings kept under a name (KEYS[1], KEYS[2]) under an id (KEYS[3], KEYS[4]) and
notes the name ARGV[1] as id ARGV[2] in KEYS[5]; 0, and nothing moved, when the id has
learnings or numbers of its own already, or the name none."""

FIRST_TEACHING = """
if redis.call('EXISTS', KEYS[2]) == 1 then
    return 0
end
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
    return 1
end
return 0
"""
"""Sets KEYS[1] for ARGV[1] seconds unless it or KEYS[2] (the mark an older Tiebreak set) is
set; 1 if it set it."""

CONNECT_TIMEOUT = 5.0
"""Seconds the CLI waits to reach Redis before it says it cannot."""

ADOPTION_EVIDENCE = 3
"""Threads of the most recent learnings kept under a name that are offered as evidence that
they are a repository's own."""

_THREAD = re.compile(r"#discussion_r(\d+)$")


class Repository(NamedTuple):
    """A repository whose learnings are kept: GitHub's id for it, and its name as it is now."""

    id: int
    full_name: str


class Recorded(NamedTuple):
    """A learning as it was kept, and the oldest one it pushed out, if any."""

    learning: Learning
    dropped: int | None


class LearningStore:
    def __init__(self, redis: Redis, cap: int = MAX_LEARNINGS) -> None:
        self.redis = redis
        self.cap = cap
        self._record = redis.register_script(RECORD)
        self._adopt = redis.register_script(ADOPT)
        self._first_teaching = redis.register_script(FIRST_TEACHING)

    @classmethod
    @contextlib.asynccontextmanager
    async def at(cls, url: str) -> AsyncIterator["LearningStore"]:
        """The learnings on the Redis at `url`, on a connection of their own (the CLI's)."""
        redis = Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT)
        try:
            yield cls(redis)
        finally:
            await redis.aclose()

    async def record(self, repository: Repository, learning: Learning) -> Recorded:
        """Keep `learning` under the repository's next number: for the repository, or for
        its pull request `learning.pull` alone."""
        if learning.pull is None:
            kept_in, cap, ttl = keys.learnings(repository.id), self.cap, 0
        else:
            kept_in = keys.pull_learnings(repository.id, learning.pull)
            cap, ttl = MAX_PULL_LEARNINGS, keys.PULL_LEARNINGS_TTL
        number, dropped = await self._record(
            keys=[kept_in, keys.learnings_counter(repository.id), keys.LEARNING_REPOSITORIES],
            args=[
                learning.model_dump_json(exclude={"number"}),
                cap,
                ttl,
                repository.full_name.lower(),
                repository.id,
            ],
        )
        kept = learning.model_copy(update={"number": int(number)})
        return Recorded(kept, int(dropped) or None)

    async def all(self, repository_id: int) -> list[Learning]:
        """The repository's learnings, most recent first."""
        return await self._read(keys.learnings(repository_id))

    async def of_pull(self, repository_id: int, number: int) -> list[Learning]:
        """The learnings pull request `number` alone reads, most recent first."""
        return await self._read(keys.pull_learnings(repository_id, number))

    async def first_teaching(self, repository: Repository, thread: int) -> bool:
        """Whether the review thread starting with comment `thread` teaches for the first
        time (True once): a 👎 stays on its comment, and is seen at every later review."""
        taught = await self._first_teaching(
            keys=[
                keys.taught(repository.id, thread),
                keys.named_taught(repository.full_name, thread),
            ],
            args=[keys.TAUGHT_TTL],
        )
        return bool(taught)

    async def forget(self, repository_id: int, number: int, pull: int) -> bool:
        """Drop learning `number` of the repository, or of its pull request `pull`; False if
        neither has one by that number."""
        for kept_in in (keys.learnings(repository_id), keys.pull_learnings(repository_id, pull)):
            if await reply(self.redis.hdel(kept_in, str(number))):
                return True
        return False

    async def repository_named(self, full_name: str) -> int | None:
        """The id of the latest repository named `owner/name` that was taught something."""
        found = await reply(self.redis.hget(keys.LEARNING_REPOSITORIES, full_name.lower()))
        return None if found is None else int(found)

    async def named(self, full_name: str) -> list[Learning]:
        """The learnings an older Tiebreak kept under the name `owner/name`, most recent first."""
        return await self._read(keys.named_learnings(full_name))

    async def unadopted_threads(self, repository: Repository) -> list[int]:
        """The first comments of the threads the most recent learnings kept under the
        repository's name were taught on: none when there are none, or when the repository's
        id has learnings of its own (they can no longer be adopted)."""
        own = await reply(
            self.redis.exists(keys.learnings(repository.id), keys.learnings_counter(repository.id))
        )
        if own:
            return []
        named = await self.named(repository.full_name)
        found = (_THREAD.search(item.thread_url) for item in named)
        threads = dict.fromkeys(int(thread[1]) for thread in found if thread)
        return list(threads)[:ADOPTION_EVIDENCE]

    async def adopt(self, repository: Repository) -> bool:
        """Move the learnings kept under the repository's name under its id, numbers and all;
        False if its id has learnings of its own, or its name none."""
        adopted = await self._adopt(
            keys=[
                keys.named_learnings(repository.full_name),
                keys.named_learnings_counter(repository.full_name),
                keys.learnings(repository.id),
                keys.learnings_counter(repository.id),
                keys.LEARNING_REPOSITORIES,
            ],
            args=[repository.full_name.lower(), repository.id],
        )
        return bool(adopted)

    async def _read(self, key: str) -> list[Learning]:
        stored = await reply(self.redis.hgetall(key))
        kept = [_parsed(int(text(number)), body) for number, body in stored.items()]
        return sorted((k for k in kept if k is not None), key=_number, reverse=True)


def _number(learning: Learning) -> int:
    return learning.number or 0


def _parsed(number: int, body: bytes | str) -> Learning | None:
    # A learning kept by an older Tiebreak whose rules it no longer meets is not applied,
    # rather than stopping every review of the repository.
    try:
        return Learning.model_validate_json(body).model_copy(update={"number": number})
    except ValidationError:
        return None
