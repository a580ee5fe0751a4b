"""What Tiebreak expects of arq, checked against the installed arq: Tiebreak queues and claims
jobs by scripts of its own (:mod:`app.store.queue`, :mod:`app.store.wakeups`), so an arq that
moved a key, changed how a job is kept or how its id is held would leave jobs unseen, or run
them twice. Each job Tiebreak queues must read back through arq's own `Job` as the job arq's
`enqueue_job` queues, run on arq's own `Worker`, and hold its id as arq's do."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from arq import Worker, constants, func
from arq.connections import ArqRedis, RedisSettings
from arq.jobs import Job, JobStatus
from arq.utils import timestamp_ms

from app.events import CommandCall, CommandRequest, CommentRef, HearingRequest, PullKey
from app.store import keys
from app.store.queue import JobName, ReviewQueue
from tests.kits.store import PROMPT, prompt_worker
from tests.scenarios.reviews import REF

JOB = "review:octo/app#7@abc"
RUN = "review:octo/app#7@abc:asked"
PULL = PullKey.model_validate(REF.model_dump())
COMMANDS = CommandRequest(pull=PULL, login="octocat", calls=[CommandCall(name="help")])


def hearing(comment: int = 12) -> HearingRequest:
    return HearingRequest(
        pull=PULL,
        login="octocat",
        comment=CommentRef(id=comment, kind="review", thread_id=11),
        text="It is checked upstream.",
    )


@pytest.mark.parametrize(
    ("ours", "arqs"),
    [
        (keys.REVIEW_QUEUE, constants.default_queue_name),
        (keys.job(JOB), constants.job_key_prefix + JOB),
        (keys.result(JOB), constants.result_key_prefix + JOB),
        (keys.in_progress(JOB), constants.in_progress_key_prefix + JOB),
        (keys.ABORTED, constants.abort_jobs_ss),
    ],
)
def test_the_arq_keys_tiebreak_writes_are_the_installed_arqs(ours: str, arqs: str) -> None:
    assert ours == arqs


Enqueue = Callable[[ReviewQueue], Awaitable[bool]]

JOBS: list[tuple[Enqueue, str, str, JobName, tuple[Any, ...]]] = [
    (
        lambda queue: queue.enqueue_review(REF, trigger="opened"),
        keys.review_job_id(REF),
        keys.REVIEW_QUEUE,
        JobName.REVIEW,
        (REF.model_dump(mode="json"), "opened"),
    ),
    (
        lambda queue: queue.resume_review(REF, None, RUN, 2),
        keys.resume_job_id(RUN, 2),
        keys.REVIEW_QUEUE,
        JobName.REVIEW,
        (REF.model_dump(mode="json"), None, RUN),
    ),
    (
        lambda queue: queue.enqueue_commands(COMMANDS, "button"),
        keys.commands_job_id(PULL, "button"),
        keys.REVIEW_QUEUE,
        JobName.COMMANDS,
        (COMMANDS.model_dump(mode="json"),),
    ),
    (
        lambda queue: queue.enqueue_hearing(hearing()),
        keys.hearing_job_id(hearing()),
        keys.REVIEW_QUEUE,
        JobName.HEARING,
        (hearing().model_dump(mode="json"),),
    ),
    (
        lambda queue: queue.enqueue_unit(RUN, 3, 2),
        keys.unit_job_id(RUN, 3, 2),
        keys.UNIT_QUEUE,
        JobName.UNIT,
        (RUN, 3, 2),
    ),
]


@pytest.mark.parametrize(("enqueue", "job_id", "queue", "function", "args"), JOBS)
async def test_a_job_tiebreak_queues_reads_back_as_the_job_arq_queues(
    redis: ArqRedis,
    enqueue: Enqueue,
    job_id: str,
    queue: str,
    function: JobName,
    args: tuple[Any, ...],
) -> None:
    assert await enqueue(ReviewQueue(redis))
    arqs = await redis.enqueue_job(function, *args, _job_id="arq's own", _queue_name=queue)
    assert arqs is not None

    ours = Job(job_id, redis, _queue_name=queue)
    mine, theirs = await ours.info(), await arqs.info()
    assert mine is not None
    assert theirs is not None
    assert (mine.function, mine.args, mine.kwargs) == (function, args, {})
    assert (theirs.function, theirs.args, theirs.kwargs) == (function, args, {})
    assert mine.job_try is theirs.job_try is None  # arq counts tries from the first run
    # Due as it is queued, and kept as long as arq keeps a job due now.
    assert mine.score == round(mine.enqueue_time.timestamp() * 1000)
    assert await ours.status() is JobStatus.queued
    ttl = await redis.pttl(keys.job(job_id))
    assert redis.expires_extra_ms - 60_000 < ttl <= redis.expires_extra_ms


async def test_an_id_arq_holds_tiebreak_cannot_queue_again_and_the_other_way(
    redis: ArqRedis,
) -> None:
    queue = ReviewQueue(redis)
    ours, theirs = hearing(12), hearing(13)

    assert await queue.enqueue_hearing(ours)
    args = theirs.model_dump(mode="json")
    assert await redis.enqueue_job(JobName.HEARING, args, _job_id=keys.hearing_job_id(theirs))

    again = ours.model_dump(mode="json")
    assert (
        await redis.enqueue_job(JobName.HEARING, again, _job_id=keys.hearing_job_id(ours)) is None
    )
    assert not await queue.enqueue_hearing(theirs)


async def test_arqs_own_worker_runs_a_job_tiebreak_queued_and_its_result_holds_the_id(
    redis: ArqRedis, redis_url: str
) -> None:
    heard: list[HearingRequest] = []

    async def run_hearing(ctx: dict[Any, Any], request_data: dict[str, Any]) -> str:
        heard.append(HearingRequest.model_validate(request_data))
        return "withdrawn"

    queue = ReviewQueue(redis)
    assert await queue.enqueue_hearing(hearing())
    worker = Worker(
        functions=[func(run_hearing, name=JobName.HEARING, keep_result=60)],
        redis_settings=RedisSettings.from_dsn(redis_url),
        burst=True,
        handle_signals=False,
        poll_delay=0.01,
    )
    await worker.main()
    await worker.close()

    assert heard == [hearing()]
    job = Job(keys.hearing_job_id(hearing()), redis)
    assert await job.status() is JobStatus.complete
    assert await job.result(timeout=PROMPT) == "withdrawn"
    assert not await queue.enqueue_hearing(hearing())  # a reply is heard once


async def test_a_job_the_prompt_worker_claims_is_in_progress_to_arq_until_it_ends(
    redis: ArqRedis, redis_url: str
) -> None:
    started, finish = asyncio.Event(), asyncio.Event()

    async def debate_unit(ctx: dict[Any, Any], run_id: str, number: int, attempt: int) -> str:
        started.set()
        await finish.wait()
        return "agreed"

    function = func(debate_unit, name=JobName.UNIT)
    async with prompt_worker(redis_url, redis, [function], keys.UNIT_QUEUE):
        assert await ReviewQueue(redis).enqueue_unit(RUN, 0, 1)
        await asyncio.wait_for(started.wait(), PROMPT)
        job = Job(keys.unit_job_id(RUN, 0, 1), redis, _queue_name=keys.UNIT_QUEUE)

        assert await job.status() is JobStatus.in_progress
        assert await redis.exists(keys.job(job.job_id))  # kept while it runs
        finish.set()
        assert await job.result(timeout=PROMPT) == "agreed"

    result = await job.result_info()
    assert result is not None
    assert result.success
    assert await redis.zscore(keys.UNIT_QUEUE, job.job_id) is None
    assert not await redis.exists(keys.job(job.job_id))  # dropped as it ended


async def test_a_running_job_tiebreak_aborts_is_cancelled_by_arq(
    redis: ArqRedis, redis_url: str
) -> None:
    started = asyncio.Event()

    async def review_pull_request(ctx: dict[Any, Any], *args: Any) -> str:
        started.set()
        await asyncio.Event().wait()  # until cancelled
        return "never"

    function = func(review_pull_request, name=JobName.REVIEW)
    queue = ReviewQueue(redis)
    async with prompt_worker(redis_url, redis, [function], keys.REVIEW_QUEUE):
        assert await queue.enqueue_review(REF)
        await asyncio.wait_for(started.wait(), PROMPT)

        await queue.abort(keys.review_job_id(REF))

        with pytest.raises(asyncio.CancelledError):
            await Job(keys.review_job_id(REF), redis).result(timeout=PROMPT)


async def reviewed(ctx: dict[Any, Any], *args: Any) -> str:
    return "reviewed"


async def test_a_job_queued_under_an_id_left_in_arqs_abort_set_runs(
    redis: ArqRedis, redis_url: str
) -> None:
    job_id = keys.review_job_id(REF)
    # Asked for after the id's last job ended (as an older Tiebreak's pushes did): arq takes
    # an id off only as it starts or ends the id's job.
    await redis.zadd(keys.ABORTED, {job_id: timestamp_ms()})

    function = func(reviewed, name=JobName.REVIEW)
    async with prompt_worker(redis_url, redis, [function], keys.REVIEW_QUEUE):
        assert await ReviewQueue(redis).enqueue_review(REF)

        assert await Job(job_id, redis).result(timeout=PROMPT) == "reviewed"


async def test_tiebreak_asks_arq_to_abort_no_job_that_has_ended(
    redis: ArqRedis, redis_url: str
) -> None:
    queue = ReviewQueue(redis)
    function = func(reviewed, name=JobName.REVIEW)
    async with prompt_worker(redis_url, redis, [function], keys.REVIEW_QUEUE):
        assert await queue.enqueue_review(REF)
        assert await Job(keys.review_job_id(REF), redis).result(timeout=PROMPT) == "reviewed"

    await queue.abort(keys.review_job_id(REF))
    newer = REF.model_copy(update={"head_sha": "c" * 40})
    assert await queue.enqueue_review(newer, replaces=REF.head_sha)  # supersedes it

    assert await redis.zcard(keys.ABORTED) == 0
