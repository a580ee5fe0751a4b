"""A typed look into Redis, for the app tests' assertions about what a delivery or a job
left behind, the redis-server's own counts of what it received, a prompt worker to run
jobs on, and writes Redis refuses."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import redis
from arq.connections import ArqRedis, RedisSettings
from arq.worker import Function
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import ConnectionError as RedisConnectionError

from app.store.keys import wakeups
from app.store.wakeups import PromptWorker

IDLE_POLL = 600.0
"""Longer than a test may take: only a wake-up explains a job started within it."""
PROMPT = 10.0
"""Seconds a test waits for what happens at once."""


class Store:
    """A typed look into Redis, for assertions about what a delivery left behind."""

    def __init__(self, url: str) -> None:
        self._redis = redis.Redis.from_url(url, decode_responses=True)

    def close(self) -> None:
        self._redis.close()

    def _call(self, command: str, *args: Any) -> Any:
        return self._redis.execute_command(command, *args)  # type: ignore[no-untyped-call]

    def drop_job(self, job_id: str) -> None:
        """As a worker that ran the job and kept no result does."""
        self._call("DEL", "arq:job:" + job_id)
        self._call("ZREM", "arq:queue", job_id)

    def queued_jobs(self) -> list[str]:
        return sorted(self._call("ZRANGE", "arq:queue", 0, -1))

    def get(self, key: str) -> str | None:
        value: str | None = self._call("GET", key)
        return value

    def raw(self, key: str) -> bytes | None:
        """A value as bytes (arq stores jobs pickled)."""
        with redis.Redis.from_url(self._url()) as client:
            value: bytes | None = client.execute_command("GET", key)
            return value

    def hget(self, key: str, field: str) -> str | None:
        value: str | None = self._call("HGET", key, field)
        return value

    def smembers(self, key: str) -> set[str]:
        return set(self._call("SMEMBERS", key))

    def exists(self, key: str) -> bool:
        return bool(self._call("EXISTS", key))

    def zscore(self, key: str, member: str) -> float | None:
        score = self._call("ZSCORE", key, member)
        return None if score is None else float(score)

    def keys(self, pattern: str) -> list[str]:
        return sorted(self._call("KEYS", pattern))

    def ttl(self, key: str) -> int:
        """Seconds `key` has left to live (-1: no expiry, -2: no such key)."""
        return int(self._call("TTL", key))

    def _url(self) -> str:
        kwargs = self._redis.connection_pool.connection_kwargs
        db = kwargs.get("db", 0)
        if "path" in kwargs:  # a Unix socket's
            return f"unix://{kwargs['path']}?db={db}"
        return f"redis://{kwargs['host']}:{kwargs['port']}/{db}"


@dataclass(frozen=True, slots=True)
class Received:
    """What the redis-server has received so far: socket reads (one per round trip) and
    commands."""

    reads: int
    commands: int


class ServerCounts:
    """The redis-server's own counts (`INFO stats`), read on a connection of the test's: each
    reading is one read and one command more."""

    def __init__(self, redis: AsyncRedis) -> None:
        self.redis = redis

    async def received(self) -> Received:
        stats = await self.redis.info("stats")
        return Received(stats["total_reads_processed"], stats["total_commands_processed"])


@contextlib.asynccontextmanager
async def server_counts(url: str) -> AsyncIterator[ServerCounts]:
    client = AsyncRedis.from_url(url)
    try:
        await client.ping()  # connected (and introduced) before anything is counted
        yield ServerCounts(client)
    finally:
        await client.aclose()


@contextlib.asynccontextmanager
async def prompt_worker(
    redis_url: str, pool: ArqRedis, functions: list[Function], queue: str, slots: int = 1
) -> AsyncIterator[PromptWorker]:
    """A prompt worker of `queue` running `functions`, `slots` at once, that polls its queue
    only every :data:`IDLE_POLL` seconds: listening for wake-ups once this yields."""
    worker = PromptWorker(
        functions=functions,
        queue_name=queue,
        redis_settings=RedisSettings.from_dsn(redis_url),
        handle_signals=False,
        allow_abort_jobs=True,
        max_jobs=slots,
        idle_poll=IDLE_POLL,
    )
    running = asyncio.create_task(worker.main())
    async with asyncio.timeout(PROMPT):
        while True:  # until it listens for wake-ups
            if (await pool.pubsub_numsub(wakeups(queue)))[0][1]:
                break
            await asyncio.sleep(0.01)
    try:
        yield worker
    finally:
        worker.burst, worker.max_burst_jobs = True, 0
        worker.wake()
        await running
        await worker.close()


class RefusedWrites:
    """`SET` on one client, refused as a connection lost would be (redis-py's
    `ConnectionError`) at the calls numbered in `refused` (from 1) of each key given, made
    outside a transaction. What the key had left to live as each call let through after the
    first refusal was made is noted (ms; negative: it had lapsed). Install it as the client's
    `set`."""

    def __init__(self, redis: AsyncRedis, refused: dict[str, set[int]]) -> None:
        self._set = redis.set
        self._pttl = redis.pttl
        self.refused = refused
        self.calls = dict.fromkeys(refused, 0)
        self.life_left: dict[str, list[int]] = {key: [] for key in refused}
        self.all_refused = asyncio.Event()

    async def __call__(self, name: Any, *args: Any, **kwargs: Any) -> Any:
        key = name.decode() if isinstance(name, bytes) else str(name)
        if key in self.refused:
            self.calls[key] += 1
            if self.calls[key] in self.refused[key]:
                if all(self.calls[k] >= max(n) for k, n in self.refused.items()):
                    self.all_refused.set()
                raise RedisConnectionError("Connection closed by server.")
            if self.calls[key] > min(self.refused[key]):
                self.life_left[key].append(await self._pttl(key))
        return await self._set(name, *args, **kwargs)
