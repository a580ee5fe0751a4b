"""Live review runs in Redis: lifecycle states, heartbeats, journals and outcomes (their plans:
:mod:`app.store.plans`; what a unit's attempt writes, batched: :mod:`app.store.unit_writes`).

A review run is a coordinator (the review job) and its units (one `debate_unit` job each, run
by any worker of the fleet). They meet only here, in the keys under `tiebreak:live`
(:mod:`app.store.keys`).

A heartbeat is a key that expires unless its owner keeps renewing it; a worker that dies
(SIGKILL, out of memory, its machine gone) stops renewing, and whoever watches sees the key
lapse. Every key expires on its own, so a run nobody finishes leaves nothing behind.
"""

import asyncio
import contextlib
import math
import os
import socket
import time
from collections.abc import AsyncIterator, Sequence
from enum import StrEnum

from pydantic import BaseModel
from redis.asyncio import Redis

from agents.diff import Diff, ReviewUnit
from agents.journal import JournalEntry
from agents.llm import Role
from agents.outcome import Outcome
from app.events import PullRequestRef
from app.publishing.models import UnitReading
from app.store import keys
from app.store.allowance import RunCeiling
from app.store.plans import (
    RunPlan,
    UnitPlan,
    plan_values,
    read_plan,
    read_readings,
    read_unit_plan,
)
from app.store.replies import reply, text


class State(StrEnum):
    """The lifecycle of a run, a unit and an agent."""

    INITIALIZING = "initializing"
    ACTIVE = "active"
    WAITING = "waiting"
    COMPLETING = "completing"
    COMPLETE = "complete"
    FAILED = "failed"


STARTED = frozenset({State.INITIALIZING, State.ACTIVE, State.COMPLETING})
"""The states of a unit some worker is running: one with a lapsed heartbeat is dead."""

ENDED = frozenset({State.COMPLETE, State.FAILED})


def worker_name() -> str:
    """This process, as states and heartbeats name it."""
    return f"{socket.gethostname()}:{os.getpid()}"


class UnitStatus(BaseModel):
    """One unit as its hash in Redis describes it."""

    number: int
    state: State = State.WAITING
    attempt: int = 1
    worker: str = ""
    round: int = 0
    calls: int = 0
    tokens: int = 0
    error: str = ""
    fatal: bool = False
    agents: dict[Role, State] = {}
    updated: float = 0.0


class Orphan(BaseModel):
    """A live run whose coordinator stopped beating, and what it takes to start it again."""

    run_id: str
    ref: PullRequestRef
    trigger: str | None
    resumes: int


class RedisJournal:
    """One unit's journal of model calls (see :mod:`agents.journal`) in a Redis list, so that
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
                pipe.hset(keys.unit(run, n), mapping=hash_fields(state=State.WAITING, attempt=1))
                pipe.expire(keys.unit(run, n), keys.LIVE_TTL)
            await pipe.execute()
        await self.set_run(run, state=State.ACTIVE, units=plan.units)

    async def open(self, run: str, ref: PullRequestRef, trigger: str | None) -> None:
        """List a run as live, initializing, with what it takes to start it again."""
        await self.set_run(
            run, state=State.INITIALIZING, ref=ref.model_dump_json(), trigger=trigger or ""
        )
        await self.redis.zadd(keys.LIVE, {run: time.time()})

    async def orphans(self, started_before: float) -> list[Orphan]:
        """Live runs started before `started_before` whose coordinator's heartbeat lapsed."""
        found = []
        for raw in await self.redis.zrangebyscore(keys.LIVE, "-inf", started_before):
            run = text(raw)
            fields = await self._run_fields(run)
            if fields.get("state") in ENDED or "ref" not in fields or await self.run_alive(run):
                continue
            found.append(
                Orphan(
                    run_id=run,
                    ref=PullRequestRef.model_validate_json(fields["ref"]),
                    trigger=fields.get("trigger") or None,
                    resumes=int(fields.get("resumes", 0)),
                )
            )
        return found

    async def count_resume(self, run: str) -> int:
        """Count one more restart of the run's coordinator; return how many there were."""
        return int(await reply(self.redis.hincrby(keys.run(run), "resumes", 1)))

    async def plan(self, run: str) -> tuple[RunPlan, Diff] | None:
        """The run's plan and the diff it covers (for its coordinator alone)."""
        return await read_plan(self.redis, run)

    async def unit_plan(self, run: str, n: int) -> UnitPlan | None:
        """What unit n's debate needs: all a unit job reads of the plan."""
        return await read_unit_plan(self.redis, run, n)

    async def readings(self, run: str, count: int) -> dict[str, UnitReading]:
        """What each unit's agents read beside the diff (see :func:`read_readings`)."""
        return await read_readings(self.redis, run, count)

    async def set_run(self, run: str, **fields: object) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hsetnx(keys.run(run), "started", str(time.time()))
            pipe.hset(keys.run(run), mapping=hash_fields(worker=worker_name(), **fields))
            pipe.expire(keys.run(run), keys.LIVE_TTL)
            await pipe.execute()

    async def run_state(self, run: str) -> State | None:
        raw = await reply(self.redis.hget(keys.run(run), "state"))
        return None if raw is None else State(text(raw))

    async def finish(self, run: str, state: State, units: int) -> None:
        """Mark a run ended and let its keys expire soon."""
        await self.set_run(run, state=state)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zrem(keys.LIVE, run)
            for key in keys.run_keys(run, units):
                pipe.expire(key, keys.FINISHED_TTL)
            await pipe.execute()

    # -- units ------------------------------------------------------------------------

    async def unit(self, run: str, n: int) -> UnitStatus:
        return (await self.units(run, [n]))[0]

    async def units(self, run: str, numbers: Sequence[int]) -> list[UnitStatus]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for n in numbers:
                pipe.hgetall(keys.unit(run, n))
            raw = await pipe.execute()
        return [parse_unit(n, fields) for n, fields in zip(numbers, raw, strict=True)]

    async def set_unit(self, run: str, n: int, **fields: object) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(keys.unit(run, n), mapping=hash_fields(updated=time.time(), **fields))
            pipe.expire(keys.unit(run, n), keys.LIVE_TTL)
            await pipe.execute()

    async def retry_unit(self, run: str, n: int, attempt: int) -> None:
        """Hand unit n to a fresh attempt: waiting for a worker, its agents not yet made."""
        fields = await reply(self.redis.hkeys(keys.unit(run, n)))
        agents = [f for f in fields if f.startswith(b"agent:")]
        async with self.redis.pipeline(transaction=True) as pipe:
            if agents:
                pipe.hdel(keys.unit(run, n), *agents)
            pipe.hset(
                keys.unit(run, n),
                mapping=hash_fields(state=State.WAITING, attempt=attempt, error="", fatal=0),
            )
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
                pipe.hget(keys.run(run), "state")
            raw = await pipe.execute()
        return [None if value is None else State(text(value)) for value in raw]

    async def run_fields(self, run: str) -> dict[str, str]:
        """The coordinator's hash: state, worker, units, started, ref, trigger, resumes."""
        return await self._run_fields(run)

    async def heartbeat_ages(self, run: str, units: int) -> list[float | None]:
        """Seconds since the coordinator, then each unit, last beat (None: lapsed)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.pttl(keys.run_heartbeat(run))
            for n in range(units):
                pipe.pttl(keys.unit_heartbeat(run, n))
            ttls = await pipe.execute()
        return [None if ttl < 0 else max(0.0, self.heartbeat - ttl / 1000) for ttl in ttls]

    async def _run_fields(self, run: str) -> dict[str, str]:
        raw = await reply(self.redis.hgetall(keys.run(run)))
        return {text(k): text(v) for k, v in raw.items()}

    @contextlib.asynccontextmanager
    async def _beating(self, key: str, value: str, *, beaten: bool = False) -> AsyncIterator[None]:
        """Renew `key` every third of the heartbeat's life while the block runs. The key is
        left to expire afterwards: a watcher never mistakes a finishing owner for a dead one."""
        life = self.heartbeat_ms
        if not beaten:
            await self.redis.set(key, value, px=life)

        async def beat() -> None:
            while True:
                await asyncio.sleep(self.heartbeat / 3)
                await self.redis.set(key, value, px=life)

        beating = asyncio.create_task(beat())
        try:
            yield
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating


def parse_unit(n: int, raw: dict[bytes, bytes]) -> UnitStatus:
    fields = {k.decode(): v.decode() for k, v in raw.items()}
    agents = {
        Role(k.removeprefix("agent:")): State(v)
        for k, v in fields.items()
        if k.startswith("agent:")
    }
    plain = {k: v for k, v in fields.items() if not k.startswith("agent:")}
    return UnitStatus.model_validate(
        {"number": n, **plain, "agents": agents, "fatal": plain.get("fatal") == "1"}
    )


def hash_fields(**fields: object) -> dict[str, str | int | float]:
    """Hash fields as Redis stores them (enums by value, booleans as 0 or 1)."""
    out: dict[str, str | int | float] = {}
    for name, value in fields.items():
        if isinstance(value, bool):
            out[name] = int(value)
        elif isinstance(value, StrEnum):
            out[name] = value.value
        elif isinstance(value, int | float | str):
            out[name] = value
        else:
            raise TypeError(f"{name}: {type(value).__name__} is not a hash field")
    return out
