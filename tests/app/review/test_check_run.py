"""A run's check run is completed whatever cut its creation short, and never doubled: real
worker, real Redis, fake GitHub.

GitHub may create the check run although Tiebreak never reads its answer (a shutdown cancels
the call, GitHub answers 502) or cannot record it (Redis fails just then). The run remembered
it was creating one before it asked, so whatever completes the run finds that one by the run's
id, its `external_id`, rather than opening a second beside it.
"""

import asyncio
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from app.store.keys import review_job_id
from app.store.pulls import OpenCheck, Pulls
from app.store.queue import ReviewQueue
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import agreed, run_left, run_review, until
from tests.scenarios.reviews import REF, REPO, background_worker, worker_setup

CHECK_RUNS = rf"/repos/{REPO}/check-runs"
QUICK = 0.01
"""GitHub retries on, as in production, with their waits scaled down."""


async def test_a_check_run_created_as_a_shutdown_cut_its_call_short_is_the_one_completed(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    setup = worker_setup(github, key, agreed(), heartbeat=1.0)
    with github.holding("POST", CHECK_RUNS) as creating:
        async with background_worker(setup, redis_url) as redis:
            await ReviewQueue(redis).enqueue_review(REF)
            assert await asyncio.to_thread(creating.wait, 20)
        # The worker stopped as a deploy stops it, its check run asked for, the answer lost.
    await until(lambda: bool(github.check_runs(REPO)))

    results = await run_left(github, key, redis_url, agreed(), heartbeat=1.0)

    assert results[review_job_id(REF)] == "neutral"
    (check,) = github.check_runs(REPO)
    assert check.states == [("in_progress", None), ("completed", "neutral")]


async def test_a_check_run_github_created_despite_a_502_is_the_one_the_review_completes(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.fail_next("POST", CHECK_RUNS, 502, processed=True)

    result, _ = await run_review(github, key, redis_url, agreed(), retry_backoff=QUICK)

    assert result == "neutral"
    (check,) = github.check_runs(REPO)
    assert check.states == [("in_progress", None), ("completed", "neutral")]
    assert len(github.requests_to("POST", CHECK_RUNS)) == 1


async def test_a_check_run_github_refused_with_a_502_is_opened_once_to_say_so(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.fail_next("POST", CHECK_RUNS, 502)

    result, _ = await run_review(github, key, redis_url, agreed(), retry_backoff=QUICK)

    assert str(result).startswith("failed")
    # The failure is reported on the one check run the run creates after looking for its own.
    (check,) = github.check_runs(REPO)
    assert check.states == [("in_progress", None), ("completed", "failure")]


async def test_a_check_run_redis_failed_to_record_is_the_one_the_failure_completes(
    github: FakeGitHub, key: AppKey, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_check = Pulls.open_check
    failures = [RedisConnectionError("Connection reset by peer")]

    async def fails_once(pulls: Pulls, check: OpenCheck, *args: Any, **kwargs: Any) -> None:
        if failures:
            raise failures.pop()
        await open_check(pulls, check, *args, **kwargs)

    monkeypatch.setattr(Pulls, "open_check", fails_once)

    result, _ = await run_review(github, key, redis_url, agreed())

    assert str(result).startswith("failed")
    (check,) = github.check_runs(REPO)
    assert check.states == [("in_progress", None), ("completed", "failure")]
