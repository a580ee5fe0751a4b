"""What Tiebreak remembers about each pull request between events, in Redis.

The latest review run (its check run, the findings that stand after it and the diff they are
on) is what `/tiebreak resolve`, `arbitrate` and `apply` act on, and what the next run
reconciles its findings with; it is kept compressed, for it holds the pull request's diff. A
budget set with `/tiebreak budget` waits for the next run; a stop request marks the run it
stops, whichever job runs it.

Several jobs change the latest run: a review saves its own, a reply or a command changes the
findings of the one it read. Each lands its change holding the pull request's landing lock
(:meth:`Pulls.landing`), which gives it the latest run as it stands, and a command or a
reply saves only over the run it was given (:meth:`Pulls.replace`), so no change is lost
to another and none lands over a newer run.
"""

import contextlib
import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from arq.connections import ArqRedis
from pydantic import BaseModel, ConfigDict
from redis.commands.core import AsyncScript

from app.events import PullKey, PullRequestRef
from app.publishing.publication import RunRecord
from app.store import keys
from app.store.locks import held
from app.store.packed import pack, unpack

LANDING_POLL = 0.05
"""Seconds between tries at a landing lock someone holds: a landing is a few writes."""

REPLACE = """
local held = redis.call('get', KEYS[1])
if not held or redis.sha1hex(held) ~= ARGV[1] then
    return 0
end
redis.call('set', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1
"""
"""Compare and set (key: the latest run; arguments: the SHA-1 of the run that was read, the
new run, its time to live): the new run is saved only if the one read is still there."""

CLAIM_OVERDUE = """
local due = redis.call('zrangebyscore', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #due == 0 then
    return false
end
redis.call('zadd', KEYS[1], 'XX', ARGV[2], due[1])
return due[1]
"""
"""Claim one check run past its deadline (key: the open check runs; arguments: now, the new
deadline): its deadline is pushed to the new one, so that no one else claims it before then."""


@dataclass(frozen=True, slots=True)
class StoredRun:
    """The latest run as it was read, and the SHA-1 of what Redis held, by which a change
    to it is saved only if it is still the latest."""

    record: RunRecord
    digest: str


class OpenCheck(BaseModel):
    """A check run a review opened and has not completed yet; without its id, one the review
    is creating: GitHub may have created it though the review never learnt its id (a shutdown
    or a 5xx cut the call short), and only the run's id, the check run's `external_id`, finds
    it again."""

    model_config = ConfigDict(frozen=True)

    ref: PullRequestRef
    check_run_id: int | None
    run_id: str

    @property
    def creating(self) -> "OpenCheck":
        """The run's check run while it is being created, its id unknown."""
        return self.model_copy(update={"check_run_id": None})


class Pulls:
    """What is remembered per pull request: its latest run, its open check runs, a budget
    waiting for its next run and the stop requests of its jobs."""

    def __init__(self, redis: ArqRedis) -> None:
        self.redis = redis
        self._replace: AsyncScript | None = None
        self._claim_overdue: AsyncScript | None = None

    async def creating_check(self, check: OpenCheck, deadline: float) -> bool:
        """Remember, before it is asked for, that the run's check run is being created, until
        :meth:`open_check` records its id; past `deadline` (a Unix time) the janitor looks
        the run's check runs up and completes them. True if an earlier attempt of the run was
        creating it already and never recorded it: GitHub may have created one."""
        member = check.creating.model_dump_json()
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zscore(keys.OPEN_CHECKS, member)
            pipe.zadd(keys.OPEN_CHECKS, {member: deadline})
            earlier, _ = await pipe.execute()
        return earlier is not None

    async def open_check(self, check: OpenCheck, deadline: float) -> None:
        """Remember a check run until it is completed; the janitor completes it past
        `deadline` (a Unix time) if nothing else has. Its id known, it is no longer being
        created."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(keys.OPEN_CHECKS, {check.model_dump_json(): deadline})
            if check.check_run_id is not None:
                pipe.zrem(keys.OPEN_CHECKS, check.creating.model_dump_json())
            await pipe.execute()

    async def close_check(self, check: OpenCheck) -> None:
        """Forget a check run its review completed, and that it was being created."""
        members = {check.model_dump_json(), check.creating.model_dump_json()}
        await self.redis.zrem(keys.OPEN_CHECKS, *members)

    async def claim_overdue_check(self, now: float, until: float) -> OpenCheck | None:
        """A check run past its deadline at `now`, claimed by this caller alone until `until`
        (a Unix time), when it is overdue again unless it was closed; None if none is overdue.
        Claimed one at a time, and closed only once completed, a check run is left for the
        next caller by one cut short before it reached it."""
        if self._claim_overdue is None:
            self._claim_overdue = self.redis.register_script(CLAIM_OVERDUE)
        raw = await self._claim_overdue(keys=[keys.OPEN_CHECKS], args=[now, until])
        return None if raw is None else OpenCheck.model_validate_json(raw)

    async def save(self, record: RunRecord) -> None:
        await self.redis.set(keys.latest_run(record.ref), pack(record), ex=keys.RUN_TTL)

    async def latest(self, ref: PullKey) -> RunRecord | None:
        stored = await self.read(ref)
        return None if stored is None else stored.record

    async def read(self, ref: PullKey) -> StoredRun | None:
        """The latest run, to change it with :meth:`replace`."""
        raw = await self.redis.get(keys.latest_run(ref))
        if raw is None:
            return None
        return StoredRun(
            unpack(RunRecord, raw), hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        )

    async def replace(self, read: StoredRun, record: RunRecord) -> bool:
        """Save `record` in place of the run `read`; False, and nothing saved, if the latest
        run is no longer that one."""
        if self._replace is None:
            self._replace = self.redis.register_script(REPLACE)
        saved = await self._replace(
            keys=[keys.latest_run(record.ref)], args=[read.digest, pack(record), keys.RUN_TTL]
        )
        return bool(saved)

    @contextlib.asynccontextmanager
    async def landing(self, pull: PullKey) -> AsyncIterator[StoredRun | None]:
        """Hold the pull request's landing lock for the block, which gets the latest run as
        it stands: save a change to it, and say so on GitHub, inside the block."""
        async with held(self.redis, keys.landing(pull), ttl=keys.LANDING_TTL, poll=LANDING_POLL):
            yield await self.read(pull)

    async def set_budget(self, ref: PullKey, tokens: int) -> None:
        await self.redis.set(keys.budget(ref), str(tokens), ex=keys.RUN_TTL)

    async def take_budget(self, ref: PullKey) -> int | None:
        """The budget set for the next run, which this run now uses up."""
        raw = await self.redis.getdel(keys.budget(ref))
        return None if raw is None else int(raw)

    async def request_stop(self, job_id: str, login: str) -> None:
        """Mark the run review job `job_id` runs as stopped by `login`: the job that picks it
        up, if its own died, sees it as well."""
        await self.redis.set(keys.stop(keys.run_of(job_id)), login, ex=keys.STOP_TTL)

    async def stopped_by(self, run_id: str) -> str | None:
        raw = await self.redis.get(keys.stop(run_id))
        return None if raw is None else str(raw.decode())
