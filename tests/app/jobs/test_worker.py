"""How the worker counts each run of a job by how it ended (`tiebreak_jobs_total`), and what
arq keeps as its result: the job's text, a failure's after `failed: `."""

import asyncio
from typing import Any

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool

from agents.errors import LLMFatal
from agents.models.scripted import ScriptedLLM
from app.jobs.job_results import Ending, JobResult
from app.jobs.worker import counted
from app.store.counters import FleetCounters
from app.store.keys import review_job_id, unit_job_id
from app.store.queue import JobName
from app.telemetry.metrics import JOBS, Metrics
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import run_worker
from tests.scenarios.reviews import REF


async def _returning(result: JobResult) -> str:
    async def job(ctx: dict[Any, Any]) -> JobResult:
        return result

    metrics = Metrics()
    kept = await counted(job, JobName.COMMANDS, metrics)({})
    assert metrics.pending()[JOBS.name] == {(JobName.COMMANDS, result.ended): 1}
    return str(kept)


@pytest.mark.parametrize(
    ("result", "kept"),
    [
        (JobResult.completed("done"), "done"),
        (JobResult.failed("the API key is invalid"), "failed: the API key is invalid"),
        # A job's own words never make it a failure: only how it says it ended does.
        (
            JobResult.completed("failed: to reproduce, so withdrawn"),
            "failed: to reproduce, so withdrawn",
        ),
    ],
)
async def test_a_job_is_counted_as_it_says_it_ended_and_arq_keeps_its_text(
    result: JobResult, kept: str
) -> None:
    assert await _returning(result) == kept


@pytest.mark.parametrize(
    ("error", "ended"),
    [(RuntimeError("boom"), Ending.FAILED), (asyncio.CancelledError(), Ending.CANCELLED)],
)
async def test_a_job_that_raised_is_counted_failed_or_cancelled(
    error: BaseException, ended: Ending
) -> None:
    async def job(ctx: dict[Any, Any]) -> JobResult:
        raise error

    metrics = Metrics()
    with pytest.raises(type(error)):
        await counted(job, JobName.REVIEW, metrics)({})

    assert metrics.pending()[JOBS.name] == {(JobName.REVIEW, ended): 1}


async def test_a_review_whose_model_refuses_it_is_counted_failed_with_its_unit(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    model = ScriptedLLM(lambda request: LLMFatal("the API key is invalid"))

    results = await run_worker(
        github, key, redis_url, model, lambda queue: queue.enqueue_review(REF), heartbeat=1.0
    )

    # As arq keeps them, read by whoever reads arq's results.
    assert results[review_job_id(REF)] == "failed: the API key is invalid"
    assert results[unit_job_id(review_job_id(REF), 0, 1)] == "failed: the API key is invalid"
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        jobs = (await FleetCounters(redis).totals())[JOBS.name]
    finally:
        await redis.aclose()
    # The janitor may have swept meanwhile, as it does at each minute's turn.
    jobs.pop((JobName.JANITOR, "completed"), None)
    assert jobs == {(JobName.REVIEW, "failed"): 1, (JobName.UNIT, "failed"): 1}
