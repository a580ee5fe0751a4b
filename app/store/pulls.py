"""What Tiebreak remembers about each pull request between events, in Redis.

The latest review run (its check run, the findings that stand after it and the diff they are
on) is what `/tiebreak resolve`, `arbitrate` and `apply` act on, and what the next run
reconciles its findings with; it is kept compressed, for it holds the pull request's diff. A
budget set with `/tiebreak budget` waits for the next run; a stop request marks the job it
stops.
"""

from arq.connections import ArqRedis
from pydantic import BaseModel, ConfigDict

from app.events import PullKey, PullRequestRef
from app.publishing.models import RunRecord
from app.store import keys
from app.store.packed import pack, unpack


class OpenCheck(BaseModel):
    """A check run a review opened and has not completed yet."""

    model_config = ConfigDict(frozen=True)

    ref: PullRequestRef
    check_run_id: int
    run_id: str


class RunStore:
    def __init__(self, redis: ArqRedis) -> None:
        self.redis = redis

    async def open_check(self, check: OpenCheck, deadline: float) -> None:
        """Remember a check run until it is completed; the janitor completes it past
        `deadline` (a Unix time) if nothing else has."""
        await self.redis.zadd(keys.OPEN_CHECKS, {check.model_dump_json(): deadline})

    async def close_check(self, check: OpenCheck) -> None:
        await self.redis.zrem(keys.OPEN_CHECKS, check.model_dump_json())

    async def claim_overdue_checks(self, now: float) -> list[OpenCheck]:
        """The check runs past their deadline, each claimed by one caller only."""
        overdue = await self.redis.zrangebyscore(keys.OPEN_CHECKS, "-inf", now)
        claimed = []
        for raw in overdue:
            if await self.redis.zrem(keys.OPEN_CHECKS, raw):
                claimed.append(OpenCheck.model_validate_json(raw))
        return claimed

    async def save(self, record: RunRecord) -> None:
        await self.redis.set(keys.latest_run(record.ref), pack(record), ex=keys.RUN_TTL)

    async def latest(self, ref: PullKey) -> RunRecord | None:
        raw = await self.redis.get(keys.latest_run(ref))
        return None if raw is None else unpack(RunRecord, raw)

    async def set_budget(self, ref: PullKey, tokens: int) -> None:
        await self.redis.set(keys.budget(ref), str(tokens), ex=keys.RUN_TTL)

    async def take_budget(self, ref: PullKey) -> int | None:
        """The budget set for the next run, which this run now uses up."""
        raw = await self.redis.getdel(keys.budget(ref))
        return None if raw is None else int(raw)

    async def request_stop(self, job_id: str, login: str) -> None:
        await self.redis.set(keys.stop(job_id), login, ex=keys.STOP_TTL)

    async def stopped_by(self, job_id: str) -> str | None:
        raw = await self.redis.get(keys.stop(job_id))
        return None if raw is None else str(raw.decode())
