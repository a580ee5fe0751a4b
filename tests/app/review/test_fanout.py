"""A review coordinates its units through Redis: failed units get fresh attempts, a unit that
never succeeds is reported, a fatal model error stops the review, a coordinator whose
worker stopped is picked up — with its check run — by another, and no unit left waiting for a
job that will never come holds its review up."""

import asyncio
import time

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from redis.exceptions import ConnectionError as RedisConnectionError

from agents.errors import LLMFatal
from agents.models.llm import LLMRequest, LLMResponse
from agents.models.scripted import ScriptedLLM
from app.events import PullRequestRef
from app.jobs.deps import WorkerDeps
from app.jobs.janitor import resume_orphans
from app.store.keys import review_job_id, unit_job_id
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from app.store.records import State
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import HeldModel, agreed, run_left, run_review, run_worker, until
from tests.scenarios.debates import (
    ORDERS,
    ORDERS_V1,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    git_diff,
    report,
)
from tests.scenarios.reviews import BASE, REF, REPO, background_worker, worker_setup

RUN = review_job_id(REF)
TWO_UNITS = 3
"""The pull request whose two files are a unit each (:func:`two_units`)."""
TWO = PullRequestRef.model_validate({**REF.model_dump(), "number": TWO_UNITS, "head_sha": "d" * 40})
ONE_AT_A_TIME = {"heartbeat": 1.0, "unit_concurrency": 1, "unit_tokens": 100}
"""A worker that debates one unit at a time, a file of TWO a unit."""


class FailsFirst:
    """A model client whose first `failures` calls raise what a bug would raise (or `error`)."""

    def __init__(self, llm: ScriptedLLM, failures: int, error: Exception | None = None) -> None:
        self.llm = llm
        self.failures = failures
        self.error = error
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error or RuntimeError(f"worker bug #{self.calls}")
        return await self.llm.complete(request)


async def unit_status(redis_url: str) -> tuple[int, State]:
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        (unit,) = await LiveRuns(redis, 1.0).units(RUN, [0])
        return unit.attempt, unit.state
    finally:
        await redis.aclose()


async def test_a_failed_unit_gets_a_fresh_attempt_and_the_review_lands_once(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    model = FailsFirst(agreed(), failures=1)

    result, _ = await run_review(github, key, redis_url, model, heartbeat=1.0)

    assert result == "neutral"
    assert len(github.reviews(REPO, 2)) == 1
    assert await unit_status(redis_url) == (2, State.COMPLETE)


async def test_a_unit_that_fails_every_attempt_is_reported_not_reviewed(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    model = FailsFirst(agreed(), failures=3)

    result, _ = await run_review(github, key, redis_url, model, heartbeat=1.0)

    assert result == "action_required"
    (check,) = github.check_runs(REPO)
    summary = check.output["summary"]
    assert "Not reviewed" in summary
    assert "Tiebreak failed with an internal error; its operators' logs say why." in summary
    assert "worker bug" not in summary
    assert "gave up after 3 attempts" in summary
    assert f"- Unit <code>u1</code> (<code>{PAYMENTS}</code>): " in summary  # the files it holds
    assert model.calls == 3


async def test_an_internal_error_reaches_the_pull_request_in_words_not_as_its_text(
    github: FakeGitHub, key: AppKey, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    lost = RedisConnectionError("Error 111 connecting to 127.0.0.1:36917. Connection refused.")
    model = FailsFirst(agreed(), failures=3, error=lost)

    await run_review(github, key, redis_url, model, heartbeat=1.0)

    (check,) = github.check_runs(REPO)
    public = check.output["summary"] + github.issue_comments(REPO, 2)[0].body
    assert "Tiebreak lost the connection to its queue." in public
    assert "127.0.0.1" not in public
    assert "Error 111" not in public
    # The operator's logs keep the exception, with its traceback.
    assert "Error 111 connecting to 127.0.0.1:36917" in caplog.text


async def test_a_fatal_model_error_stops_the_review_without_retrying(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    model = ScriptedLLM(lambda request: LLMFatal("the API key is invalid"))

    result, _ = await run_review(github, key, redis_url, model, heartbeat=1.0)

    assert result == "failed: the API key is invalid"
    assert len(model.requests) == 1
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "failure")
    assert github.reviews(REPO, 2) == []


async def test_a_run_whose_worker_stopped_is_picked_up_with_its_check_run(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    model = HeldModel(agreed())
    async with background_worker(worker_setup(github, key, model, heartbeat=1.0), redis_url) as r:
        await ReviewQueue(r).enqueue_review(REF)
        await asyncio.wait_for(model.first_call.wait(), 20)
    # The worker stopped mid-debate (as a shutdown stops it); its heartbeats lapse.
    await asyncio.sleep(1.5)

    async def resume(queue: ReviewQueue) -> None:
        deps = WorkerDeps.started(worker_setup(github, key, agreed(), heartbeat=1.0), queue.redis)
        assert await resume_orphans(deps, now=time.time()) == 1
        assert await resume_orphans(deps, now=time.time()) == 0  # queued once

    await run_worker(github, key, redis_url, model.llm, resume, heartbeat=1.0)

    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")
    assert len(github.reviews(REPO, 2)) == 1


def two_units(github: FakeGitHub) -> None:
    """Open TWO: the payments change and a new orders file."""
    diff = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER), ORDERS: (None, ORDERS_V1)})
    github.add_pull(REPO, TWO_UNITS, head_sha=TWO.head_sha, base_sha=BASE, diff=diff)


def nothing_found() -> ScriptedLLM:
    """Each unit's tester finds nothing: one call a unit."""
    return ScriptedLLM(lambda request: report())


async def waiting_unit(redis: ArqRedis) -> int:
    """The number of the unit of TWO waiting for a worker while the other is debated."""
    units = await LiveRuns(redis, 1.0).units(review_job_id(TWO), [0, 1])
    (waiting,) = [u.number for u in units if u.state is State.WAITING]
    return waiting


async def test_a_shutdown_leaves_a_unit_still_queued_to_the_review_s_next_worker(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    two_units(github)
    model = HeldModel(nothing_found())
    setup = worker_setup(github, key, model, **ONE_AT_A_TIME)
    async with background_worker(setup, redis_url) as redis:
        await ReviewQueue(redis).enqueue_review(TWO)
        await asyncio.wait_for(model.first_call.wait(), 20)
        queued = await waiting_unit(redis)
    # The worker stopped as a deploy stops it: one unit mid-call, the other still queued.

    left = run_left(github, key, redis_url, nothing_found(), **ONE_AT_A_TIME)
    results = await asyncio.wait_for(left, 10)

    assert results[review_job_id(TWO)] == "success"
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")
    # The queued unit's job was left to run, not aborted for a fresh attempt to replace.
    assert results[unit_job_id(review_job_id(TWO), queued, 1)] == "no_findings"


async def test_a_unit_whose_job_ended_before_it_started_gets_a_fresh_attempt(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    two_units(github)
    model = HeldModel(nothing_found())
    setup = worker_setup(github, key, model, **ONE_AT_A_TIME)
    async with background_worker(setup, redis_url) as redis:
        await ReviewQueue(redis).enqueue_review(TWO)
        await asyncio.wait_for(model.first_call.wait(), 20)
        # The queued unit's job is aborted: it ends as a worker takes it, the unit unstarted.
        waiting = await waiting_unit(redis)
        await ReviewQueue(redis).abort(unit_job_id(review_job_id(TWO), waiting, 1))
        model.release()

        await until(lambda: github.check_runs(REPO)[0].status == "completed", 10)
        (unit,) = await LiveRuns(redis, 1.0).units(review_job_id(TWO), [waiting])

    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")
    assert (unit.attempt, unit.state) == (2, State.COMPLETE)
