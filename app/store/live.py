"""Live review runs in Redis: lifecycle states, heartbeats, journals and outcomes (their plans:
:mod:`app.store.plans`; what a unit's attempt writes, batched: :mod:`app.store.unit_writes`;
the run's and its units' hashes, as typed records: :mod:`app.store.records`).

A review run is a coordinator (the review job) and its units (one `debate_unit` job each, run
by any worker of the fleet). They meet only here, in the keys under `tiebreak:live`
(:mod:`app.store.keys`).

A heartbeat is a key that expires unless its owner keeps renewing it; a worker that dies
(SIGKILL, out of memory, its machine gone) stops renewing, and whoever watches sees the key
lapse. The owner renews it several times within its life, so that a renewal Redis refuses (a
connection lost and made again) is not taken for a death. Every key expires on its own, so a
run nobody finishes leaves nothing behind.
"""

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
from collections.abc import AsyncIterator, Sequence

from pydantic import BaseModel
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from agents.debate.journal import JournalEntry
from agents.diff import Diff, ReviewUnit
from agents.outcome import Outcome
from app.events import PullRequestRef
from app.publishing.publication import UnitReading
from app.store import keys
from app.store.allowance import RunCeiling
from app.store.connection import STORE_ERRORS
from app.store.plans import (
    RunPlan,
    UnitPlan,
    plan_values,
    read_plan,
    read_readings,
    read_unit_plan,
)
from app.store.records import ENDED, RunStatus, State, UnitStatus
from app.store.redis_typing import reply, text

EXPIRE_ALL = """
for _, key in ipairs(KEYS) do
    redis.call('expire', key, ARGV[1])
end
"""
"""Each key given expires ARGV[1] seconds from now (a key that is not there: nothing)."""

FORGET = """
if redis.call('exists', KEYS[1]) == 0 then
    redis.call('zrem', KEYS[2], ARGV[1])
end
"""
"""Take run ARGV[1] off the live runs (KEYS[2]) unless its hash (KEYS[1]) is there. A run's
hash is written before the run is listed, and the run is taken off the list as it is finished:
one listed without its hash expired unfinished, and nothing else would take it off."""

BEATS_PER_LIFE = 4
"""How many times a heartbeat is renewed within its life: after two renewals in a row that
Redis refused at once, the third still finds it with a quarter of its life to go."""

log = logging.getLogger(__name__)


def worker_name() -> str:
    """This process, as states and heartbeats name it."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Orphan(BaseModel):
    """A live run whose coordinator stopped beating, and what it takes to start it again."""

    run_id: str
    ref: PullRequestRef
    trigger: str | None
    resumes: int


class RedisJournal:
    """One unit's journal of model calls (see :mod:`agents.debate.journal`) in a Redis list, so that
    a fresh attempt on any worker replays what a dead one was answered."""

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


class LiveRuns:
    """The coordination keys of every live run, on one Redis."""

    def __init__(self, redis: Redis, heartbeat: float) -> None:
        self.redis = redis
        self.heartbeat = heartbeat
        """Seconds a heartbeat lives without renewal."""

    @property
    def heartbeat_ms(self) -> int:
        """Milliseconds a heartbeat lives without renewal."""
        return max(1, round(self.heartbeat * 1000))

    @classmethod
    @contextlib.asynccontextmanager
    async def at(cls, url: str, heartbeat: float) -> AsyncIterator["LiveRuns"]:
        """The live runs on the Redis at `url`, on a connection of their own."""
        redis = Redis.from_url(url)
        try:
            yield cls(redis, heartbeat)
        finally:
            await redis.aclose()

    # -- the run ----------------------------------------------------------------------

    async def begin(self, plan: RunPlan, diff: Diff, units: list[ReviewUnit]) -> None:
        """Record a run's plan (see :mod:`app.store.plans`: `diff` is the part of the pull
        request's diff it covers, `units` its review units), its coordinator active and each
        unit waiting for a worker."""
        run = plan.run_id
        async with self.redis.pipeline(transaction=True) as pipe:
            for key, value in plan_values(plan, diff, units).items():
                pipe.set(key, value, ex=keys.LIVE_TTL)
            pipe.zadd(keys.LIVE, {run: time.time()})
            for n in range(plan.units):
                pipe.delete(keys.unit(run, n))
                waiting = UnitStatus(number=n, state=State.WAITING, attempt=1)
                pipe.hset(keys.unit(run, n), mapping=waiting.fields())
                pipe.expire(keys.unit(run, n), keys.LIVE_TTL)
            _queue_run(pipe, run, RunStatus(state=State.ACTIVE, units=plan.units))
            await pipe.execute()

    async def open(self, run: str, ref: PullRequestRef, trigger: str | None) -> None:
        """List a run as live, initializing, with what it takes to start it again."""
        await self.set_run(run, RunStatus(state=State.INITIALIZING, ref=ref, trigger=trigger))
        await self.redis.zadd(keys.LIVE, {run: time.time()})

    async def orphans(self, started_before: float) -> list[Orphan]:
        """Live runs started before `started_before` whose coordinator's heartbeat lapsed. A
        run listed whose keys have expired, nobody having finished it, is taken off the list."""
        found = []
        for raw in await self.redis.zrangebyscore(keys.LIVE, "-inf", started_before):
            run = text(raw)
            status = await self.run_status(run)
            if status is None:
                await reply(self.redis.eval(FORGET, 2, keys.run(run), keys.LIVE, run))
                continue
            if status.ref is None or status.state in ENDED:
                continue
            if await self.run_alive(run):
                continue
            found.append(
                Orphan(run_id=run, ref=status.ref, trigger=status.trigger, resumes=status.resumes)
            )
        return found

    async def count_resume(self, run: str) -> int:
        """Count one more restart of the run's coordinator; return how many there were."""
        return int(await reply(self.redis.hincrby(keys.run(run), keys.RunField.RESUMES, 1)))

    async def plan(self, run: str) -> tuple[RunPlan, Diff] | None:
        """The run's plan and the diff it covers (for its coordinator alone)."""
        return await read_plan(self.redis, run)

    async def unit_plan(self, run: str, n: int) -> UnitPlan | None:
        """What unit n's debate needs: all a unit job reads of the plan."""
        return await read_unit_plan(self.redis, run, n)

    async def readings(self, run: str, count: int) -> dict[str, UnitReading]:
        """What each unit's agents read beside the diff (see :func:`read_readings`)."""
        return await read_readings(self.redis, run, count)

    async def set_run(self, run: str, status: RunStatus) -> None:
        """Write the fields set on `status`, this worker as the run's, and when the run
        started unless it is known."""
        async with self.redis.pipeline(transaction=True) as pipe:
            _queue_run(pipe, run, status)
            await pipe.execute()

    async def run_state(self, run: str) -> State | None:
        raw = await reply(self.redis.hget(keys.run(run), keys.RunField.STATE))
        return None if raw is None else State(text(raw))

    async def finish(self, run: str, state: State, units: int) -> None:
        """Mark a run ended and let its keys expire soon, in one transaction: its keys in one
        command, however many its units have."""
        ending = keys.run_keys(run, units)
        async with self.redis.pipeline(transaction=True) as pipe:
            _queue_run(pipe, run, RunStatus(state=state))
            pipe.zrem(keys.LIVE, run)
            pipe.eval(EXPIRE_ALL, len(ending), *ending, str(keys.FINISHED_TTL))
            await pipe.execute()

    # -- units ------------------------------------------------------------------------

    async def unit(self, run: str, n: int) -> UnitStatus:
        return (await self.units(run, [n]))[0]

    async def units(self, run: str, numbers: Sequence[int]) -> list[UnitStatus]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for n in numbers:
                pipe.hgetall(keys.unit(run, n))
            raw = await pipe.execute()
        return [UnitStatus.read_unit(n, fields) for n, fields in zip(numbers, raw, strict=True)]

    async def set_unit(self, run: str, status: UnitStatus) -> None:
        """Write the fields set on `status` to its unit."""
        unit = keys.unit(run, status.number)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(unit, mapping={**status.fields(), keys.UnitField.UPDATED: time.time()})
            pipe.expire(unit, keys.LIVE_TTL)
            await pipe.execute()

    async def retry_unit(self, run: str, n: int, attempt: int) -> None:
        """Hand unit n to a fresh attempt: waiting for a worker, its agents not yet made."""
        fields = await reply(self.redis.hkeys(keys.unit(run, n)))
        agents = [f for f in fields if f.startswith(keys.AGENT_FIELDS.encode())]
        fresh = UnitStatus(number=n, state=State.WAITING, attempt=attempt, error="", fatal=False)
        async with self.redis.pipeline(transaction=True) as pipe:
            if agents:
                pipe.hdel(keys.unit(run, n), *agents)
            pipe.hset(keys.unit(run, n), mapping=fresh.fields())
            await pipe.execute()

    async def unit_alive(self, run: str, n: int, attempt: int) -> bool:
        """Whether attempt `attempt` at unit n has beaten within the heartbeat's life."""
        beat = await self.redis.get(keys.unit_heartbeat(run, n))
        return beat is not None and beat.decode() == str(attempt)

    def beating_unit(
        self, run: str, n: int, attempt: int, *, beaten: bool = False
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """Keep attempt `attempt` at unit n beating while the block runs (`beaten`: its first
        beat is written already, with its status)."""
        return self._beating(keys.unit_heartbeat(run, n), str(attempt), beaten=beaten)

    def beating_run(self, run: str) -> contextlib.AbstractAsyncContextManager[None]:
        return self._beating(keys.run_heartbeat(run), worker_name())

    async def run_alive(self, run: str) -> bool:
        return bool(await self.redis.exists(keys.run_heartbeat(run)))

    async def outcomes(self, run: str, numbers: Sequence[int]) -> dict[int, Outcome]:
        if not numbers:
            return {}
        raw = await self.redis.mget([keys.outcome(run, n) for n in numbers])
        return {
            n: Outcome.model_validate_json(value)
            for n, value in zip(numbers, raw, strict=True)
            if value is not None
        }

    async def wait(self, run: str, seconds: float) -> list[int]:
        """Block until a unit of the run ends or `seconds` pass (whole seconds, at least one);
        return the numbers of the units that ended meanwhile (none: time ran out)."""
        first = await reply(self.redis.blpop([keys.done(run)], timeout=max(1, math.ceil(seconds))))
        if first is None:
            return []
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lrange(keys.done(run), 0, -1)
            pipe.delete(keys.done(run))
            rest, _ = await pipe.execute()
        return [int(first[1]), *(int(n) for n in rest)]

    def journal(self, run: str, n: int) -> RedisJournal:
        return RedisJournal(self.redis, keys.journal(run, n), ttl=keys.LIVE_TTL)

    def ceiling(self, run: str, tokens: int) -> RunCeiling:
        """The run's token ceiling, shared by its units wherever they run."""
        return RunCeiling(self.redis, keys.spent(run), tokens, ttl=keys.LIVE_TTL)

    # -- what `tiebreak status` shows ---------------------------------------------------

    async def live_runs(self) -> list[str]:
        return [text(raw) for raw in await self.redis.zrange(keys.LIVE, 0, -1)]

    async def run_states(self) -> list[State | None]:
        """The coordinator's state of each live run (None: its keys have expired)."""
        runs = await self.live_runs()
        async with self.redis.pipeline(transaction=False) as pipe:
            for run in runs:
                pipe.hget(keys.run(run), keys.RunField.STATE)
            raw = await pipe.execute()
        return [None if value is None else State(text(value)) for value in raw]

    async def run_status(self, run: str) -> RunStatus | None:
        """The run's coordinator as its hash describes it (None: the hash has expired, or
        was never written); raises ValueError for a field no worker writes."""
        raw = await reply(self.redis.hgetall(keys.run(run)))
        return RunStatus.read(raw) if raw else None

    async def heartbeat_ages(self, run: str, units: int) -> list[float | None]:
        """Seconds since the coordinator, then each unit, last beat (None: lapsed)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.pttl(keys.run_heartbeat(run))
            for n in range(units):
                pipe.pttl(keys.unit_heartbeat(run, n))
            ttls = await pipe.execute()
        return [None if ttl < 0 else max(0.0, self.heartbeat - ttl / 1000) for ttl in ttls]

    @contextlib.asynccontextmanager
    async def _beating(self, key: str, value: str, *, beaten: bool = False) -> AsyncIterator[None]:
        """Renew `key` :data:`BEATS_PER_LIFE` times in the heartbeat's life while the block
        runs. A renewal Redis refuses, or does not answer in time for the next, is logged and
        the next is tried as planned: the owner is alive, and taken for dead, its work would
        be started again beside it. The key is left to expire afterwards: a watcher never
        mistakes a finishing owner for a dead one."""
        life, every = self.heartbeat_ms, self.heartbeat / BEATS_PER_LIFE
        if not beaten:
            await self.redis.set(key, value, px=life)

        async def beat() -> None:
            while True:
                await asyncio.sleep(every)
                try:
                    async with asyncio.timeout(every):
                        await self.redis.set(key, value, px=life)
                except STORE_ERRORS as exc:
                    log.warning("heartbeat %s not renewed (next in %.1f s): %s", key, every, exc)

        beating = asyncio.create_task(beat())
        try:
            yield
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating


def _queue_run(pipe: Pipeline, run: str, status: RunStatus) -> None:
    """Queue the writes of :meth:`LiveRuns.set_run` on `pipe`."""
    pipe.hsetnx(keys.run(run), keys.RunField.STARTED, str(time.time()))
    mine = RunStatus(worker=worker_name())
    pipe.hset(keys.run(run), mapping={**mine.fields(), **status.fields()})
    pipe.expire(keys.run(run), keys.LIVE_TTL)
