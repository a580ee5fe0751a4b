"""A review coordinates its units through Redis: failed units get fresh attempts, a unit that
never succeeds is reported, a fatal model error stops the review, and a coordinator whose
worker stopped is picked up — with its check run — by another."""

import asyncio
import time

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from redis.exceptions import ConnectionError as RedisConnectionError

from agents.errors import LLMFatal
from agents.models.llm import LLMRequest, LLMResponse
from agents.models.scripted import ScriptedLLM
from app.jobs.deps import WorkerDeps
from app.jobs.janitor import resume_orphans
from app.store.keys import review_job_id
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from app.store.records import State
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import HeldModel, agreed, run_review, run_worker
from tests.scenarios.debates import PAYMENTS
from tests.scenarios.reviews import REF, REPO, background_worker, worker_setup

RUN = review_job_id(REF)


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
