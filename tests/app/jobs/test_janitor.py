"""The janitor: a check run whose review died is completed as `timed_out`, and no other.

A review is left unfinished the way a dying worker leaves it: the worker stops while the model
is answering, and nothing completes the check run. The janitor is then run as arq's cron job
would run it, at a moment past the deadline.
"""

import asyncio
import time

from arq.connections import ArqRedis, RedisSettings, create_pool

from app.bodies import CheckRunUpdate, Conclusion
from app.github.client import GitHubApp
from app.jobs.deps import CHECK_DEADLINE, WorkerDeps
from app.jobs.janitor import complete_overdue
from app.store.keys import OPEN_CHECKS
from app.store.queue import ReviewQueue
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import HeldModel, agreed, run_review, until
from tests.scenarios.reviews import APP_ID, REF, REPO, background_worker, worker_setup


async def abandoned_review(github: FakeGitHub, key: AppKey, redis_url: str) -> None:
    """Start a review and stop its worker mid-debate, leaving the check run in progress."""
    model = HeldModel(agreed())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        await ReviewQueue(redis).enqueue_review(REF)
        await asyncio.wait_for(model.first_call.wait(), 20)


async def check_run_created_as_a_shutdown_came(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    """Start a review and stop its worker as it asks for its check run: GitHub creates the
    check run, in progress, and the review never learns its id."""
    setup = worker_setup(github, key, agreed())
    with github.holding("POST", rf"/repos/{REPO}/check-runs") as creating:
        async with background_worker(setup, redis_url) as redis:
            await ReviewQueue(redis).enqueue_review(REF)
            assert await asyncio.to_thread(creating.wait, 20)
    await until(lambda: bool(github.check_runs(REPO)))


async def sweep(github: FakeGitHub, key: AppKey, redis_url: str, at: float) -> int:
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    deps = WorkerDeps.started(worker_setup(github, key, agreed()), redis)
    try:
        return await complete_overdue(deps, now=at)
    finally:
        await redis.aclose()


async def test_a_check_run_whose_worker_died_is_completed_as_timed_out(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await abandoned_review(github, key, redis_url)
    (check,) = github.check_runs(REPO)
    assert check.status == "in_progress"

    # Before the deadline, the review may still be running somewhere: left alone.
    assert await sweep(github, key, redis_url, at=time.time()) == 0
    assert github.check_runs(REPO)[0].status == "in_progress"

    completed = await sweep(github, key, redis_url, at=time.time() + CHECK_DEADLINE + 1)

    assert completed == 1
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "timed_out")
    assert "/tiebreak review" in check.output["summary"]
    # Claimed once: a second sweep, on any worker, finds nothing.
    assert await sweep(github, key, redis_url, at=time.time() + CHECK_DEADLINE + 2) == 0


async def test_a_check_run_whose_id_its_review_never_learnt_is_found_and_timed_out(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await check_run_created_as_a_shutdown_came(github, key, redis_url)
    (check,) = github.check_runs(REPO)
    assert check.status == "in_progress"

    assert await sweep(github, key, redis_url, at=time.time()) == 0
    completed = await sweep(github, key, redis_url, at=time.time() + CHECK_DEADLINE + 1)

    assert completed == 1
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "timed_out")
    assert await sweep(github, key, redis_url, at=time.time() + CHECK_DEADLINE + 2) == 0


async def test_a_finished_review_leaves_nothing_for_the_janitor(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_review(github, key, redis_url, agreed())

    assert await sweep(github, key, redis_url, at=time.time() + CHECK_DEADLINE + 1) == 0
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        assert await redis.zcard(OPEN_CHECKS) == 0
    finally:
        await redis.aclose()


async def test_a_check_run_completed_without_its_bookkeeping_is_not_touched(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await abandoned_review(github, key, redis_url)
    (check,) = github.check_runs(REPO)
    # Its review completed it, then died before it could say so in Redis.
    app = GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False)
    installation = app.installation(REF.installation_id)
    await installation.update_check_run(
        REF, check.id, CheckRunUpdate(status="completed", conclusion=Conclusion.NEUTRAL)
    )

    assert await sweep(github, key, redis_url, at=time.time() + CHECK_DEADLINE + 1) == 0
    assert github.check_runs(REPO)[0].states[-1] == ("completed", "neutral")
