"""The review queue on arq: one job per pull request head, newer pushes superseding older.

A job is keyed by repository, pull number and head sha, so a redelivered or repeated event
never starts a second review of the same head; a draft marked ready is keyed apart (its
head's job may have declined the draft), and its review ends at once if that head was
reviewed already. Redis also remembers each pull request's
latest head: a push from it records the new one and asks arq to abort the job of the head it
replaces (:mod:`app.store.heads` tells which push supersedes which, whatever order they are
heard in), and a review checks it before it starts and before it publishes, so a superseded
review never posts.

Every job is queued as arq's `enqueue_job` queues it, but by one script, which also announces
it on its queue's wake-up channel (:mod:`app.store.wakeups`): one round trip to Redis where
arq's takes three, and for a review, a fourth that records the head. A review asked for by a
webhook delivery remembers the delivery's id in that same round trip (:mod:`app.store.deliveries`
tells why it is remembered).

What the script relies on in arq 0.28 (`ArqRedis.enqueue_job` in `arq/connections.py`, a job
due now), each checked against the installed arq by `tests/app/store/test_arq.py`:

* the keys (:mod:`app.store.keys` spells them): the job under `arq:job:<id>`, kept until the
  job ends, its id in the queue's zset scored by the time (ms) it is due, its result under
  `arq:result:<id>`, and `arq:abort`, the zset of ids a worker cancels, an id taken off it
  only as its job starts or ends;
* the job's value: `arq.jobs.serialize_job(function, args, {}, None, now_ms)` with the pool's
  `job_serializer`, kept for the pool's `expires_extra_ms` (public attributes of `ArqRedis`),
  which arq's `Job.info()` and `Worker.run_job` read back;
* `_job_id`: no job is queued under an id while a job or a result is kept under it (arq
  checks both keys under `WATCH`, the script atomically), so an id is held from its queueing
  until its result expires (the function's `keep_result`), whoever queued it.

Nothing private of arq's is used here; `Job(...).status()` reads a job's state.
"""

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from arq.connections import ArqRedis
from arq.jobs import Job, JobStatus, serialize_job
from arq.utils import timestamp_ms
from redis.asyncio.client import Pipeline
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from app.events import (
    CommandRequest,
    CompletedRun,
    HearingRequest,
    PullKey,
    PullRequestRef,
    QueuedRef,
)
from app.store import keys
from app.store.heads import RESUME, SUPERSEDE
from app.store.pipelining import AutoPipeline
from app.store.redis_typing import text
from app.store.wakeups import ring


class JobName(StrEnum):
    """Every job Tiebreak queues, by the name arq runs it under. The worker binds each to its
    function (:mod:`app.jobs.worker`); whoever enqueues names it by this, never by a string."""

    REVIEW = "review_pull_request"
    """One pull request head, from check run to published review (:mod:`app.jobs.review`)."""
    COMMANDS = "run_commands"
    """The commands of one comment or button press (:mod:`app.jobs.commands`)."""
    HEARING = "hear_reply"
    """A person's reply on one of Tiebreak's finding threads, heard (:mod:`app.jobs.hearing`).
    Its name is older than the job's: arq stores it with each queued job, so it stays, and a
    hearing queued before a deploy still runs after it."""
    UNIT = "debate_unit"
    """One attempt at one review unit's debate (:mod:`app.jobs.unit`)."""
    WORKFLOW_RUN = "take_workflow_run"
    """A findings' test run in the repository's Actions, its result taken if it finished
    (:mod:`app.jobs.workflow_results`)."""
    JANITOR = "janitor"
    """The sweep for orphaned runs and overdue check runs (:mod:`app.jobs.janitor`)."""


QUEUES = {"reviews": keys.REVIEW_QUEUE, "units": keys.UNIT_QUEUE}
"""The arq queues, by the name their gauges carry."""

IN_PROGRESS_LOOKS = 1000
"""Ready jobs per queue checked for arq's in-progress key. Workers take ready jobs oldest
first, so the running ones are among the first; this bounds a scrape's cost when a queue is
long."""


ENQUEUE = """
if redis.call('exists', KEYS[1], KEYS[2]) > 0 then
    return 0
end
redis.call('psetex', KEYS[1], ARGV[1], ARGV[2])
redis.call('zadd', KEYS[3], ARGV[3], ARGV[4])
redis.call('zrem', KEYS[4], ARGV[4])
redis.call('publish', ARGV[5], '')
return 1
"""
"""arq's `enqueue_job`, atomic: unless a job or a result is kept under the id, keep the job
and put it in its queue, ready now, off arq's abort set; then wake the queue's workers (keys:
the job's job and result keys, its queue, the abort set; arguments: the time to live, the
job's data, the time, its id, the wake-up channel). With no job kept under its id, no job of
that id is queued or running: an abort of the id was meant for an earlier job (arq keeps one
it was never asked to start, such as one an older Tiebreak left), and must not cancel this
one as it starts."""

ENQUEUE_EACH = """
local queue, aborted = KEYS[#KEYS], KEYS[#KEYS - 1]
local added = {}
for i = 1, (#KEYS - 2) / 2 do
    if redis.call('exists', KEYS[2 * i - 1], KEYS[2 * i]) > 0 then
        added[i] = 0
    else
        redis.call('psetex', KEYS[2 * i - 1], ARGV[1], ARGV[2 * i + 2])
        redis.call('zadd', queue, ARGV[2], ARGV[2 * i + 3])
        redis.call('zrem', aborted, ARGV[2 * i + 3])
        added[i] = 1
    end
end
redis.call('publish', ARGV[3], '')
return added
"""
""":data:`ENQUEUE` for many jobs of one queue (keys: each job's job and result keys, then the
abort set, then the queue; arguments: the time to live, the time, the wake-up channel, then
each job's data and id), waking the queue's workers once."""

ABORT = """
if redis.call('exists', KEYS[1]) == 1 then
    redis.call('zadd', KEYS[2], ARGV[1], ARGV[2])
end
"""
"""Ask arq to abort job ARGV[2] (at the time ARGV[1], in ms) if it is still kept (keys: its job
key, the abort set): queued, running or to be retried. The id of a job that ended would stay
in the set for good (:data:`app.store.heads.SUPERSEDE` says why)."""

ONCE = """
if not redis.call('set', KEYS[#KEYS], '1', 'NX', 'EX', ARGV[#ARGV]) then
    return -1
end
"""
"""Before anything else: remember the delivery asking for the job, unless it was remembered
already, in which case nothing is done (its key and time to live come last)."""


class ReviewQueue:
    """Enqueues every job (:class:`JobName`), each with the arguments its function takes,
    tracks each pull request's latest head and tells how the queues stand."""

    def __init__(self, redis: ArqRedis) -> None:
        self.redis = redis
        self._scripts: dict[str, AsyncScript] = {}
        self._pipeline = AutoPipeline(redis)

    async def enqueue_review(
        self,
        ref: PullRequestRef,
        *,
        trigger: str | None = None,
        rerun: str | None = None,
        delivery: str | None = None,
        replaces: str | None = None,
        base_sha: str | None = None,
    ) -> bool:
        """Queue a review of `ref`; False if that head is already queued, running or done, or
        if `delivery` (the id of the webhook delivery asking for it) was seen already.

        `trigger` is the pull request event that asks for an automatic review; the
        repository's config decides whether it gets one (a draft marked ready gets a job of
        its own: its head's may have declined it). `rerun` names a review a person asked
        for (`/tiebreak review`, "Re-run"): a new job even for a head that was reviewed
        already. The delivery is remembered in the same step (see :class:`Deliveries`), so
        its redelivery queues nothing. `replaces` is the head a push replaced, by which it
        supersedes the review of that head (see :mod:`app.store.heads`). `base_sha` is the
        pull request's base commit as the event named it (:class:`QueuedRef`).
        """
        job_id = keys.review_job_id(ref, rerun, trigger=trigger)
        supersede = [keys.head(ref), keys.current_job(ref)]
        queued = QueuedRef(**ref.model_dump(), base_sha=base_sha)
        unnamed = {"base_sha"} if base_sha is None else set()
        return await self._enqueue(
            JobName.REVIEW,
            queued.model_dump(mode="json", exclude=unnamed),
            trigger,
            job_id=job_id,
            queue=keys.REVIEW_QUEUE,
            first=(SUPERSEDE, supersede, [ref.head_sha, keys.HEAD_TTL, replaces or "", keys.job()]),
            delivery=delivery,
        )

    async def enqueue_commands(self, request: CommandRequest, source: str) -> bool:
        """Queue the commands of one comment or button press, once per `source`."""
        return await self._enqueue(
            JobName.COMMANDS,
            request.model_dump(mode="json"),
            job_id=keys.commands_job_id(request.pull, source),
            queue=keys.REVIEW_QUEUE,
        )

    async def enqueue_hearing(self, request: HearingRequest) -> bool:
        """Queue a person's reply in a review thread to be heard, once per comment."""
        return await self._enqueue(
            JobName.HEARING,
            request.model_dump(mode="json"),
            job_id=keys.hearing_job_id(request),
            queue=keys.REVIEW_QUEUE,
        )

    async def enqueue_unit(self, run_id: str, number: int, attempt: int) -> bool:
        """Queue one attempt at one unit of a run; False if that attempt is queued already."""
        return (await self.enqueue_units(run_id, [(number, attempt)]))[0]

    async def enqueue_units(self, run_id: str, attempts: Iterable[tuple[int, int]]) -> list[bool]:
        """Queue attempts at units of a run, given as (unit, attempt), all at once, in one
        round trip that wakes the unit workers once; for each, False if it is queued already."""
        jobs = [
            (keys.unit_job_id(run_id, n, attempt), (run_id, n, attempt)) for n, attempt in attempts
        ]
        if not jobs:
            return []
        now = timestamp_ms()
        serializer = self.redis.job_serializer
        added = await self._script(ENQUEUE_EACH)(
            keys=[
                *(key for job_id, _ in jobs for key in (keys.job(job_id), keys.result(job_id))),
                keys.ABORTED,
                keys.UNIT_QUEUE,
            ],
            args=[
                self.redis.expires_extra_ms,
                now,
                keys.wakeups(keys.UNIT_QUEUE),
                *(
                    value
                    for job_id, args in jobs
                    for value in (
                        serialize_job(JobName.UNIT, args, {}, None, now, serializer=serializer),
                        job_id,
                    )
                ),
            ],
        )
        return [int(a) == 1 for a in added]

    async def resume_unit(self, run_id: str, number: int, attempt: int, after: str) -> bool:
        """Queue attempt `attempt` at a unit again, to take it up once the test runs it
        waited for are in (`after` names the moment: the run whose result came last)."""
        return await self._enqueue(
            JobName.UNIT,
            run_id,
            number,
            attempt,
            job_id=keys.unit_resume_job_id(run_id, number, attempt, after),
            queue=keys.UNIT_QUEUE,
        )

    async def take_workflow_run(self, token: str, completed: CompletedRun | None, why: str) -> bool:
        """Queue a look at workflow run `token` (at the run a delivery says `completed`, if
        one does): `why` tells each look from the others, a delivery's run (`run-<id>`) from
        another's and from each of the janitor's polls (`poll-<minute>`)."""
        return await self._enqueue(
            JobName.WORKFLOW_RUN,
            token,
            None if completed is None else completed.model_dump(mode="json"),
            job_id=keys.workflow_run_job_id(token, why),
            queue=keys.REVIEW_QUEUE,
        )

    async def resume_review(
        self, ref: PullRequestRef, trigger: str | None, run_id: str, resume: int
    ) -> bool:
        """Queue a coordinator to pick up run `run_id`, whose own died (its `resume`th); if
        the run's job was the pull request's current one, this one is now (see
        :data:`RESUME`)."""
        return await self._enqueue(
            JobName.REVIEW,
            ref.model_dump(mode="json"),
            trigger,
            run_id,
            job_id=keys.resume_job_id(run_id, resume),
            queue=keys.REVIEW_QUEUE,
            first=(
                RESUME,
                [keys.current_job(ref)],
                [run_id, keys.resumed_jobs(run_id), keys.HEAD_TTL],
            ),
        )

    async def _enqueue(
        self,
        function: JobName,
        *args: Any,
        job_id: str,
        queue: str,
        first: tuple[str, list[str], list[str | int]] | None = None,
        delivery: str | None = None,
    ) -> bool:
        """Queue `function(*args)` as arq does, under `job_id`; False if a job or a result is
        kept under that id, or `delivery` was remembered already. `first` is a script run
        before, in the same step (:data:`SUPERSEDE`, :data:`RESUME`), with its keys and
        arguments."""
        now = timestamp_ms()
        job = serialize_job(function, args, {}, None, now, serializer=self.redis.job_serializer)
        before, extra_keys, extra_args = first or ("", [], [])
        script = before + ENQUEUE
        if delivery is not None:
            script = ONCE + script
            extra_keys = [*extra_keys, keys.delivery(delivery)]
            extra_args = [*extra_args, keys.DELIVERY_TTL]
        sha = self._script(script).sha
        script_keys = [keys.job(job_id), keys.result(job_id), queue, keys.ABORTED, *extra_keys]
        script_args = [
            self.redis.expires_extra_ms,
            job,
            now,
            job_id,
            keys.wakeups(queue),
            *extra_args,
        ]

        def run(pipe: Pipeline) -> object:
            return pipe.execute_command(
                "EVALSHA", sha, len(script_keys), *script_keys, *script_args
            )

        # Sent with the other jobs being queued at the same moment (:mod:`app.store.pipelining`).
        try:
            added = await self._pipeline.call(run)
        except NoScriptError:
            # Redis lost its scripts (a restart, `SCRIPT FLUSH`): loaded again, then run.
            await self._pipeline.call(lambda pipe: pipe.script_load(script))
            added = await self._pipeline.call(run)
        return int(added) == 1

    def _script(self, script: str) -> AsyncScript:
        if script not in self._scripts:
            # Registered once: a script object hashes its text, on every delivery otherwise.
            self._scripts[script] = self.redis.register_script(script)
        return self._scripts[script]

    async def unit_pending(self, run_id: str, number: int, attempt: int) -> bool:
        """Whether attempt `attempt` at a unit is queued or running: not once its job has
        ended, whatever it came to, nor if no such job is kept."""
        job_id = keys.unit_job_id(run_id, number, attempt)
        status = await Job(job_id, self.redis, _queue_name=keys.UNIT_QUEUE).status()
        return status in (JobStatus.queued, JobStatus.deferred, JobStatus.in_progress)

    async def resume_pending(self, run_id: str, resume: int) -> bool:
        """Whether the `resume`th coordinator queued for the run has yet to start beating."""
        if resume == 0:
            return False
        status = await Job(keys.resume_job_id(run_id, resume), self.redis).status()
        return status in (JobStatus.deferred, JobStatus.queued)

    async def current_job(self, pull: PullKey) -> str | None:
        """The id of the latest review job queued for the pull request (a coordinator queued
        to pick its run up, once one was)."""
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

    async def ping(self) -> None:
        """Raise unless Redis answers."""
        await self.redis.ping()

    async def abort(self, job_id: str) -> None:
        """Have arq cancel job `job_id` if it is queued or running (one that ended: nothing)."""
        aborting = [keys.job(job_id), keys.ABORTED]
        await self._script(ABORT)(keys=aborting, args=[timestamp_ms(), job_id])
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
                    pipe.exists(keys.in_progress(job))
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
