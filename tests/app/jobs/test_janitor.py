"""The janitor: a check run whose review died is completed as `timed_out`, and no other; a run
whose coordinator died is picked up, once, unless its coordinator is alive after all.

A review is left unfinished the way a dying worker leaves it: the worker stops while the model
is answering, and nothing completes the check run. The janitor is then run as arq's cron job
would run it, at a moment past the deadline.
"""

import asyncio
import time

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool

from agents.models.llm import Role
from app.bodies import CheckRunUpdate, Conclusion, NewCheckRun
from app.github.client import GitHubApp
from app.jobs.deps import CHECK_DEADLINE, HEARTBEAT, WorkerDeps
from app.jobs.janitor import RETRY_LATER, complete_overdue, resume_orphans
from app.jobs.worker import Workers
from app.store import keys
from app.store.keys import OPEN_CHECKS, review_job_id
from app.store.live import LiveRuns
from app.store.pulls import OpenCheck, Pulls
from app.store.queue import ReviewQueue
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import HeldModel, agreed, run_review, run_worker, until
from tests.kits.store import RefusedWrites
from tests.scenarios.reviews import (
    APP_ID,
    BASE,
    DIFF,
    HEAD,
    NUMBER,
    REF,
    REPO,
    background_worker,
    worker_setup,
)

NEWER = "d" * 40
"""The head a push moves the pull request to, from HEAD."""


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


async def test_a_run_superseded_while_its_coordinator_was_down_ends_as_superseded(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await abandoned_review(github, key, redis_url)
    run = review_job_id(REF)
    github.add_pull(REPO, NUMBER, head_sha=NEWER, base_sha=BASE, diff=DIFF)

    async def push_and_sweep(queue: ReviewQueue) -> int:
        await queue.enqueue_review(REF.model_copy(update={"head_sha": NEWER}), replaces=HEAD)
        await queue.redis.delete(keys.run_heartbeat(run))  # it lapsed: its worker is gone
        return await resume_orphans(janitor(github, key, queue.redis), now=past_a_heartbeat())

    results = await run_worker(github, key, redis_url, agreed(), push_and_sweep)

    assert results[keys.resume_job_id(run, 1)] == "superseded before it was picked up"
    old, new = github.check_runs(REPO)
    assert old.states[-1] == ("completed", "cancelled")
    assert old.output["title"] == "Superseded by a newer push (ddddddd)"
    assert new.states[-1] == ("completed", "neutral")
    # Ended: no sweep resumes it again, nor times its check run out.
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        deps = janitor(github, key, redis)
        assert await resume_orphans(deps, now=past_a_heartbeat()) == 0
        assert await complete_overdue(deps, now=time.time() + CHECK_DEADLINE + 1) == 0
        assert run not in await deps.live_runs().live_runs()
    finally:
        await redis.aclose()
    assert github.check_runs(REPO)[0].states[-1] == ("completed", "cancelled")


SHORT_HEARTBEAT = 1.0
"""Seconds a heartbeat lives without renewal in the test of refused renewals: the shortest a
worker may be given."""


async def test_a_review_whose_heartbeats_redis_refused_once_runs_once(
    github: FakeGitHub, key: AppKey, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = review_job_id(REF)
    model = HeldModel(agreed())
    workers = Workers(worker_setup(github, key, model, heartbeat=SHORT_HEARTBEAT), redis_url)
    # A coordinator's first beat is a SET of its own, a unit's is written with its start.
    beats = {keys.run_heartbeat(run): {2}, keys.unit_heartbeat(run, 0): {1}}
    refusing = RefusedWrites(workers.deps.redis, beats)
    monkeypatch.setattr(workers.deps.redis, "set", refusing)
    running = asyncio.create_task(workers.run())
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        await ReviewQueue(redis).enqueue_review(REF)
        await asyncio.wait_for(model.first_call.wait(), 20)
        await asyncio.wait_for(refusing.all_refused.wait(), 20)
        # Longer than a heartbeat lives: either would have lapsed, were it not renewed since.
        await asyncio.sleep(2 * SHORT_HEARTBEAT)
        deps = WorkerDeps.started(worker_setup(github, key, agreed()), redis)
        resumed = await resume_orphans(deps, now=time.time())
        model.release()
        await until(lambda: github.check_runs(REPO)[0].status == "completed")
        (unit,) = await LiveRuns(redis, SHORT_HEARTBEAT).units(run, [0])
    finally:
        await workers.stop()
        await running
        await redis.aclose()

    # No second attempt at the unit: each of the tester's calls was asked once.
    assert unit.attempt == 1
    assert [r.tool.name for r in model.llm.calls(Role.TESTER)] == [
        "report_findings",
        "evaluate_answers",
    ]
    # No second coordinator: the check run was completed once.
    assert resumed == 0
    (check,) = github.check_runs(REPO)
    assert check.states == [("in_progress", None), ("completed", "neutral")]


def janitor(github: FakeGitHub, key: AppKey, redis: ArqRedis) -> WorkerDeps:
    """What the janitor's sweep is given on a worker."""
    return WorkerDeps.started(worker_setup(github, key, agreed()), redis)


def past_a_heartbeat() -> float:
    """A moment when a run started now has a lapsed heartbeat, unless it was renewed."""
    return time.time() + HEARTBEAT + 1


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
