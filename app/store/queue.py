"""The review queue on arq: one job per pull request head, newer pushes superseding older.

A job is keyed by repository, pull number and head sha, so a redelivered or repeated event
never starts a second review of the same head. Redis also remembers each pull request's
latest head: a push records it and asks arq to abort the job of the head it replaces, and a
running review checks it before publishing, so a superseded review never posts.
"""

import asyncio
from collections.abc import Iterable
from enum import StrEnum

from arq.connections import ArqRedis
from arq.constants import abort_jobs_ss, in_progress_key_prefix
from arq.jobs import Job, JobStatus
from arq.utils import timestamp_ms

from app.events import CommandRequest, PullKey, PullRequestRef
from app.store import keys
from app.store.replies import text
from app.store.wakeups import ring


class JobName(StrEnum):
    """Every job Tiebreak queues, by the name arq runs it under. The worker binds each to its
    function (:mod:`app.jobs.worker`); whoever enqueues names it by this, never by a string."""

    REVIEW = "review_pull_request"
    """One pull request head, from check run to published review (:mod:`app.jobs.review`)."""
    COMMANDS = "run_commands"
    """The commands of one comment or button press (:mod:`app.jobs.commands`)."""
    UNIT = "debate_unit"
    """One attempt at one review unit's debate (:mod:`app.jobs.unit`)."""
    JANITOR = "janitor"
    """The sweep for orphaned runs and overdue check runs (:mod:`app.jobs.janitor`)."""


def review_job_id(ref: PullRequestRef, rerun: str | None = None) -> str:
    """`review:owner/repo#7@sha`, with `:rerun` for a review asked for again."""
    return f"review:{ref.key}@{ref.head_sha}" + (f":{rerun}" if rerun else "")


def _resume_job_id(run_id: str, resume: int) -> str:
    return f"{run_id}:resume-{resume}"


def unit_job_id(run_id: str, number: int, attempt: int) -> str:
    return f"unit:{run_id}:{number}:{attempt}"


QUEUES = {"reviews": keys.REVIEW_QUEUE, "units": keys.UNIT_QUEUE}
"""The arq queues, by the name their gauges carry."""

IN_PROGRESS_LOOKS = 1000
"""Ready jobs per queue checked for arq's in-progress key. Workers take ready jobs oldest
first, so the running ones are among the first; this bounds a scrape's cost when a queue is
long."""


class ReviewQueue:
    """Enqueues every job (:class:`JobName`), each with the arguments its function takes,
    tracks each pull request's latest head and tells how the queues stand."""

    def __init__(self, redis: ArqRedis) -> None:
        self.redis = redis

    async def enqueue_review(
        self, ref: PullRequestRef, *, trigger: str | None = None, rerun: str | None = None
    ) -> bool:
        """Queue a review of `ref`; False if that head is already queued, running or done.

        `trigger` is the pull request event that asks for an automatic review; the
        repository's config decides whether it gets one. `rerun` names a review a person asked
        for (`/tiebreak review`, "Re-run"): a new job even for a head that was reviewed
        already.
        """
        job_id = review_job_id(ref, rerun)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(keys.head(ref), ref.head_sha, ex=keys.HEAD_TTL)
            pipe.getset(keys.current_job(ref), job_id)
            pipe.expire(keys.current_job(ref), keys.HEAD_TTL)
            _, previous, _ = await pipe.execute()
        if previous is not None and previous.decode() != job_id:
            # Aborting only asks: a queued job is dropped, a running one cancelled; either way
            # the newer push has already become the head that counts.
            await self.redis.zadd(abort_jobs_ss, {previous.decode(): timestamp_ms()})
        job = await self.redis.enqueue_job(
            JobName.REVIEW,
            ref.model_dump(mode="json"),
            trigger,
            _job_id=job_id,
            _queue_name=keys.REVIEW_QUEUE,
        )
        if job is not None or previous is not None:
            await ring(self.redis, keys.REVIEW_QUEUE)
        return job is not None

    async def enqueue_commands(self, request: CommandRequest, source: str) -> bool:
        """Queue the commands of one comment or button press, once per `source`."""
        job = await self.redis.enqueue_job(
            JobName.COMMANDS,
            request.model_dump(mode="json"),
            _job_id=f"commands:{request.pull.key}:{source}",
            _queue_name=keys.REVIEW_QUEUE,
        )
        if job is not None:
            await ring(self.redis, keys.REVIEW_QUEUE)
        return job is not None

    async def enqueue_unit(self, run_id: str, number: int, attempt: int) -> bool:
        """Queue one attempt at one unit of a run; False if that attempt is queued already."""
        return (await self.enqueue_units(run_id, [(number, attempt)]))[0]

    async def enqueue_units(self, run_id: str, attempts: Iterable[tuple[int, int]]) -> list[bool]:
        """Queue attempts at units of a run, given as (unit, attempt), all at once; for each,
        False if it is queued already."""
        jobs = await asyncio.gather(
            *(
                self.redis.enqueue_job(
                    JobName.UNIT,
                    run_id,
                    number,
                    attempt,
                    _job_id=unit_job_id(run_id, number, attempt),
                    _queue_name=keys.UNIT_QUEUE,
                )
                for number, attempt in attempts
            )
        )
        if any(job is not None for job in jobs):
            await ring(self.redis, keys.UNIT_QUEUE)
        return [job is not None for job in jobs]

    async def resume_review(
        self, ref: PullRequestRef, trigger: str | None, run_id: str, resume: int
    ) -> bool:
        """Queue a coordinator to pick up run `run_id`, whose own died (its `resume`th)."""
        job = await self.redis.enqueue_job(
            JobName.REVIEW,
            ref.model_dump(mode="json"),
            trigger,
            run_id,
            _job_id=_resume_job_id(run_id, resume),
            _queue_name=keys.REVIEW_QUEUE,
        )
        if job is not None:
            await ring(self.redis, keys.REVIEW_QUEUE)
        return job is not None

    async def resume_pending(self, run_id: str, resume: int) -> bool:
        """Whether the `resume`th coordinator queued for the run has yet to start beating."""
        if resume == 0:
            return False
        status = await Job(_resume_job_id(run_id, resume), self.redis).status()
        return status in (JobStatus.deferred, JobStatus.queued)

    async def current_job(self, pull: PullKey) -> str | None:
        """The id of the latest review job queued for the pull request."""
        job_id = await self.redis.get(keys.current_job(pull))
        return None if job_id is None else str(job_id.decode())

    async def unfinished_review(self, pull: PullKey) -> str | None:
        """The id of the pull request's latest review job, if it is queued or running."""
        job_id = await self.current_job(pull)
        if job_id is None:
            return None
        status = await Job(job_id, self.redis).status()
        unfinished = (JobStatus.queued, JobStatus.in_progress, JobStatus.deferred)
        return job_id if status in unfinished else None

    async def latest_head(self, ref: PullKey) -> str | None:
        head = await self.redis.get(keys.head(ref))
        return None if head is None else str(head.decode())

    async def ping(self) -> None:
        """Raise unless Redis answers."""
        await self.redis.ping()

    async def abort(self, job_id: str) -> None:
        await self.redis.zadd(abort_jobs_ss, {job_id: timestamp_ms()})
        # Every worker looks for aborted jobs when it looks at its queue.
        await ring(self.redis, *QUEUES.values())

    async def job_states(self) -> dict[str, dict[str, int]]:
        """The jobs of each queue by state: ready and waiting for a worker (queued), scheduled
        for later (deferred), or running (arq's in-progress key is set)."""
        now = timestamp_ms()
        async with self.redis.pipeline(transaction=True) as pipe:
            for key in QUEUES.values():
                pipe.zcount(key, "-inf", now)
                pipe.zcount(key, f"({now}", "+inf")
                pipe.zrangebyscore(key, "-inf", now, start=0, num=IN_PROGRESS_LOOKS)
            replies = await pipe.execute()
        ready = dict(zip(QUEUES, replies[0::3], strict=True))
        deferred = dict(zip(QUEUES, replies[1::3], strict=True))
        looked: dict[str, list[str]] = {
            queue: [text(job) for job in jobs]
            for queue, jobs in zip(QUEUES, replies[2::3], strict=True)
        }
        async with self.redis.pipeline(transaction=False) as pipe:
            for jobs in looked.values():
                for job in jobs:
                    pipe.exists(in_progress_key_prefix + job)
            running = iter(await pipe.execute())
        states = {}
        for queue, jobs in looked.items():
            in_progress = sum(1 for _ in jobs if next(running))
            states[queue] = {
                "queued": max(0, int(ready[queue]) - in_progress),
                "deferred": int(deferred[queue]),
                "in_progress": in_progress,
            }
        return states

    async def is_superseded(self, ref: PullRequestRef) -> bool:
        latest = await self.latest_head(ref)
        return latest is not None and latest != ref.head_sha
