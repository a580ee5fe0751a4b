"""Findings' tests dispatched to the repository's Actions, in Redis: what each unit waits for,
and what each run showed once it is in.

A unit's debate that asks for a test run records it here before the workflow is dispatched
(:class:`PendingRun`, under the run's token), so a run's result can never arrive before the
record of who waits for it. The result is recorded under the run's digest in the unit's test
runs (:class:`UnitTestRuns`, read back by :class:`agents.debate.recorded_tests.RecordedVerifier`),
exactly once whoever settles it (the `workflow_run` webhook's job, the janitor's poll, or the
janitor at the deadline), and the settling that leaves the unit waiting for nothing more is
the one that takes it up again. Nothing of a wait lives in a process.
"""

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict
from redis.asyncio import Redis

from agents.debate.recorded_tests import RecordedRun
from app.events import PullRequestRef
from app.store import keys
from app.store.caps import count_within
from app.store.records import State
from app.store.redis_typing import reply, text

TAKE_UP = """
local state = redis.call('hget', KEYS[1], ARGV[1])
if state == ARGV[2] and redis.call('hget', KEYS[1], ARGV[3]) == ARGV[4] then
    redis.call('hset', KEYS[1], ARGV[1], ARGV[5])
    return 1
end
return 0
"""
"""A unit waiting for its tests, taken up by one job: its state from testing to active, if
it is still the attempt's."""


class PendingRun(BaseModel):
    """A test run dispatched to a workflow and not yet settled."""

    model_config = ConfigDict(frozen=True)

    token: str
    """Tiebreak's name for the run, carried by the workflow run's title."""
    run_id: str
    unit: int
    attempt: int
    """The unit's attempt that waits for it."""
    digest: str
    """What is run (:func:`agents.debate.recorded_tests.run_digest`): its result's key."""
    ref: PullRequestRef
    workflow: str
    branch: str = ""
    """The branch it was dispatched from: the repository's default branch."""
    github_run: int | None = None
    """The run GitHub said the dispatch started, once it said (`return_run_details`):
    then that run, and no other, settles it."""
    test: str
    """The test's path."""
    command: str
    """The command, as it runs the test."""
    fix: bool = False
    """A fix check (the test at the head with a patch), else a reproduction."""
    own: bool = False
    """The pull request's own test at the head, as it is there (cited as evidence of intent)."""
    follow: bool = False
    """A proven finding's test run again at a later head: the run's coordinator waits for it
    (:mod:`app.review.following`), under `unit` past the run's last unit, and no unit does."""
    dispatched_at: float
    deadline: float
    """When it counts as not run (Unix time)."""
    minutes: int
    """The config's `timeout_minutes`, as the reason for a run that did not finish says."""


class Settled(BaseModel):
    """A run settled now, and whether its unit waits for nothing more."""

    run: PendingRun
    last: bool


class WorkflowRuns:
    """Every unit's dispatched runs, on one Redis."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def wait_for(self, run: PendingRun) -> None:
        """Record `run` as dispatched and its unit as waiting for it."""
        dispatched = keys.unit_dispatched(run.run_id, run.unit)
        awaited = keys.unit_awaited(run.run_id, run.unit)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(keys.workflow_run(run.token), run.model_dump_json(), ex=keys.LIVE_TTL)
            pipe.zadd(keys.WORKFLOW_RUNS, {run.token: run.deadline})
            pipe.hset(dispatched, run.digest, run.token)
            pipe.sadd(awaited, run.token)
            for key in (dispatched, awaited):
                pipe.expire(key, keys.LIVE_TTL)
            await pipe.execute()

    async def pin(self, token: str, github_run: int) -> None:
        """Record which of GitHub's runs run `token` is, as GitHub answered its dispatch,
        unless it was settled meanwhile (its record then stays gone)."""
        run = await self.get(token)
        if run is None:
            return
        pinned = run.model_copy(update={"github_run": github_run})
        # Only over the record as it is: a settling that deleted it meanwhile wins.
        await self.redis.set(
            keys.workflow_run(token), pinned.model_dump_json(), xx=True, keepttl=True
        )

    async def dispatched(self, run_id: str, unit: int, digest: str) -> PendingRun | None:
        """The run of `digest` the unit dispatched and is still waiting for, if any."""
        token = await reply(self.redis.hget(keys.unit_dispatched(run_id, unit), digest))
        return None if token is None else await self.get(text(token))

    async def get(self, token: str) -> PendingRun | None:
        raw = await self.redis.get(keys.workflow_run(token))
        return None if raw is None else PendingRun.model_validate_json(raw)

    async def settle(self, token: str, result: RecordedRun) -> Settled | None:
        """Record what run `token` showed, unless it was settled already (None then)."""
        run = await self.get(token)
        if run is None:
            return None
        tests = keys.unit_tests(run.run_id, run.unit)
        awaited = keys.unit_awaited(run.run_id, run.unit)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(keys.workflow_run(token))
            pipe.hsetnx(tests, run.digest, result.model_dump_json())
            pipe.expire(tests, keys.LIVE_TTL)
            pipe.zrem(keys.WORKFLOW_RUNS, token)
            pipe.srem(awaited, token)
            pipe.scard(awaited)
            deleted, *_, left = await pipe.execute()
        # Two settlers of one run (the webhook's job and the deadline) both write nothing
        # harmful, but only the one that removed the record settled it.
        return Settled(run=run, last=int(left) == 0) if deleted else None

    async def wake(self, run: PendingRun) -> None:
        """Wake the coordinator of `run`'s review, which waits for it (a followed test)."""
        done = keys.done(run.run_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(done, run.unit)
            pipe.expire(done, keys.LIVE_TTL)
            await pipe.execute()

    async def forget(self, run: PendingRun) -> None:
        """Drop `run`, whose dispatch GitHub refused: nothing will settle it."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(keys.workflow_run(run.token))
            pipe.zrem(keys.WORKFLOW_RUNS, run.token)
            pipe.hdel(keys.unit_dispatched(run.run_id, run.unit), run.digest)
            pipe.srem(keys.unit_awaited(run.run_id, run.unit), run.token)
            await pipe.execute()

    async def discard(self, token: str) -> None:
        """Drop a token whose record expired with its run's keys: nothing waits for it."""
        await self.redis.zrem(keys.WORKFLOW_RUNS, token)

    async def uncount_dispatch(self, run_id: str) -> None:
        """Give back a run counted by :meth:`count_dispatch` that GitHub did not start."""
        await self.redis.decr(keys.test_runs(run_id))

    async def count_dispatch(self, run_id: str, max_runs: int) -> bool:
        """Count one more test run of the review; False (and nothing counted) past
        `max_runs`."""
        return await count_within(self.redis, keys.test_runs(run_id), max_runs, keys.LIVE_TTL)

    async def take_up(self, run_id: str, unit: int, attempt: int) -> bool:
        """Whether this caller takes up attempt `attempt` at `unit`, which waits for its
        tests (one caller does, however many the results' arrival queued)."""
        take_up = self.redis.register_script(TAKE_UP)
        args = [keys.UnitField.STATE, State.TESTING.value, keys.UnitField.ATTEMPT, str(attempt)]
        taken = await take_up(keys=[keys.unit(run_id, unit)], args=[*args, State.ACTIVE.value])
        return int(taken) == 1

    async def stalled(self, run_id: str, unit: int) -> int | None:
        """For a unit left testing: how many test runs it has recorded, if it waits for none
        any more (None: it still waits for some). That count names the moment it was left."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.scard(keys.unit_awaited(run_id, unit))
            pipe.hlen(keys.unit_tests(run_id, unit))
            awaited, recorded = await pipe.execute()
        return None if int(awaited) else int(recorded)

    async def due(self, now: float) -> list[str]:
        """The tokens of the runs past their deadline."""
        raw = await self.redis.zrangebyscore(keys.WORKFLOW_RUNS, "-inf", now)
        return [text(token) for token in raw]

    async def waiting(self) -> list[str]:
        """The tokens of every run not yet settled."""
        return [text(token) for token in await self.redis.zrange(keys.WORKFLOW_RUNS, 0, -1)]


class UnitTestRuns:
    """One unit's recorded test runs (:class:`agents.debate.recorded_tests.RecordedRuns`)."""

    def __init__(self, redis: Redis, run_id: str, unit: int) -> None:
        self.redis = redis
        self.key = keys.unit_tests(run_id, unit)

    async def recorded(self, digest: str) -> RecordedRun | None:
        raw = await reply(self.redis.hget(self.key, digest))
        return None if raw is None else RecordedRun.model_validate_json(raw)

    async def record(self, digest: str, run: RecordedRun) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.key, digest, run.model_dump_json())
            pipe.expire(self.key, keys.LIVE_TTL)
            await pipe.execute()

    async def all_recorded(self, digests: Sequence[str]) -> bool:
        """Whether every one of `digests` has its result recorded."""
        if not digests:
            return True
        found = await reply(self.redis.hmget(self.key, list(digests)))
        return all(value is not None for value in found)
