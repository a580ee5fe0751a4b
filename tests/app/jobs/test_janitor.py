"""The janitor: a check run whose review died is completed as `timed_out`, and no other.

A review is left unfinished the way a dying worker leaves it: the worker stops while the model
is answering, and nothing completes the check run. The janitor is then run as arq's cron job
would run it, at a moment past the deadline.
"""

import asyncio
import time

from arq.connections import ArqRedis, RedisSettings, create_pool

from app.bodies import CheckRunUpdate, Conclusion, NewCheckRun
from app.github.client import GitHubApp
from app.jobs.deps import CHECK_DEADLINE, WorkerDeps
from app.jobs.janitor import RETRY_LATER, complete_overdue
from app.store.keys import OPEN_CHECKS
from app.store.pulls import OpenCheck, Pulls
from app.store.queue import ReviewQueue
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import HeldModel, agreed, run_review
from tests.scenarios.reviews import APP_ID, REF, REPO, background_worker, worker_setup


async def abandoned_review(github: FakeGitHub, key: AppKey, redis_url: str) -> None:
    """Start a review and stop its worker mid-debate, leaving the check run in progress."""
    model = HeldModel(agreed())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        await ReviewQueue(redis).enqueue_review(REF)
        await asyncio.wait_for(model.first_call.wait(), 20)


async def overdue_checks(github: FakeGitHub, key: AppKey, redis_url: str, count: int) -> float:
    """Open `count` check runs whose reviews died, as their reviews opened them; return a moment
    past their deadline."""
    app = GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False)
    installation = app.installation(REF.installation_id)
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    deadline = time.time() + CHECK_DEADLINE
    try:
        for n in range(count):
            check_id = await installation.create_check_run(
                REF, NewCheckRun(status="in_progress", external_id=f"review:{n}")
            )
            check = OpenCheck(ref=REF, check_run_id=check_id, run_id=f"review:{n}")
            await Pulls(redis).open_check(check, deadline)
    finally:
        await redis.aclose()
    return deadline + 1


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


async def test_a_sweep_cut_short_leaves_the_check_runs_it_did_not_complete_to_the_next(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    at = await overdue_checks(github, key, redis_url, 3)
    with github.holding("GET", rf"/repos/{REPO}/check-runs/\d+") as asked:
        cut_short = asyncio.create_task(sweep(github, key, redis_url, at))
        assert await asyncio.to_thread(asked.wait, 10)
        # GitHub is slow: the sweep runs out of time on the first check run.
        cut_short.cancel()
        await asyncio.gather(cut_short, return_exceptions=True)

    # The next sweep completes the two the first never reached; the one it was completing
    # is left to a sweep once the first's claim on it lapsed.
    assert await sweep(github, key, redis_url, at) == 2
    assert await sweep(github, key, redis_url, at + RETRY_LATER + 1) == 1
    assert [c.states[-1] for c in github.check_runs(REPO)] == [("completed", "timed_out")] * 3
    assert await sweep(github, key, redis_url, at + 2 * RETRY_LATER) == 0


async def test_two_sweeps_at_once_complete_each_check_run_once(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    at = await overdue_checks(github, key, redis_url, 4)

    swept = await asyncio.gather(*(sweep(github, key, redis_url, at) for _ in range(2)))

    assert sum(swept) == 4
    for check in github.check_runs(REPO):
        assert check.states == [("in_progress", None), ("completed", "timed_out")]
