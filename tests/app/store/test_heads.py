"""Which job a push aborts: the one running the pull request's latest run, even when that run
was picked up by a new coordinator, its own having died."""

from arq.connections import ArqRedis

from app.store.keys import ABORTED, resume_job_id, review_job_id
from app.store.queue import ReviewQueue
from tests.scenarios.reviews import REF

NEWER_REF = REF.model_copy(update={"head_sha": "d" * 40})
"""The pull request after a push from `REF`'s head."""


async def aborted(redis: ArqRedis) -> set[str]:
    return {job.decode() for job in await redis.zrange(ABORTED, 0, -1)}


async def test_a_push_aborts_the_coordinator_that_picked_up_the_run(redis: ArqRedis) -> None:
    queue, run = ReviewQueue(redis), review_job_id(REF)
    await queue.enqueue_review(REF)
    await queue.resume_review(REF, None, run, 1)
    await queue.resume_review(REF, None, run, 2)

    await queue.enqueue_review(NEWER_REF, replaces=REF.head_sha)

    assert await aborted(redis) == {resume_job_id(run, 2)}
    assert await queue.current_job(REF) == review_job_id(NEWER_REF)


async def test_a_run_picked_up_after_a_push_leaves_the_newer_review_current(
    redis: ArqRedis,
) -> None:
    queue, run = ReviewQueue(redis), review_job_id(REF)
    await queue.enqueue_review(REF)
    await queue.enqueue_review(NEWER_REF, replaces=REF.head_sha)

    await queue.resume_review(REF, None, run, 1)

    assert await queue.current_job(REF) == review_job_id(NEWER_REF)
    assert await aborted(redis) == {run}
