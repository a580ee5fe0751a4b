"""The App's test identity on the fake GitHub, its pull request, and a real worker's wiring to
run Tiebreak's jobs on it."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from arq.connections import ArqRedis, RedisSettings, create_pool

from agents.diff import Diff, ReviewUnit
from agents.models.llm import LLMClient
from app.events import PullRequestRef
from app.github.client import GitHubApp
from app.jobs.deps import WorkerSetup
from app.jobs.worker import Workers
from app.settings import Settings
from app.store.live import LiveRuns
from app.store.plans import RunPlan
from app.telemetry.metrics import Metrics
from policies.config import RepoConfig
from policies.debate import DebatePolicy
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.scenarios.debates import PAYMENTS, PAYMENTS_AFTER, PAYMENTS_BEFORE, git_diff

REPO, NUMBER, INSTALLATION, APP_ID = "Codertocat/Hello-World", 2, 1, 42
REPO_ID = 186853002
"""GitHub's id of REPO, as the webhook payloads' examples carry it."""
HEAD, BASE = "a" * 40, "b" * 40
DIFF = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})
REF = PullRequestRef(
    installation_id=INSTALLATION,
    owner="Codertocat",
    repo="Hello-World",
    number=NUMBER,
    repository_id=REPO_ID,
    head_sha=HEAD,
)


def worker_setup(
    github: FakeGitHub,
    key: AppKey,
    llm: LLMClient,
    *,
    retry_backoff: float | None = None,
    **fields: Any,
) -> WorkerSetup:
    """A worker's setup on the fake GitHub. GitHub calls are not retried unless
    `retry_backoff` scales the production policy's waits; `fields` override the others
    (the settings, the clock). The GitHub client counts its failures in the worker's
    metrics, as in production."""
    metrics = Metrics()
    app = GitHubApp(
        APP_ID,
        key.private_pem,
        github.base_url,
        retry=retry_backoff is not None,
        retry_backoff=retry_backoff or 1.0,
        metrics=metrics,
    )
    return WorkerSetup(
        **{"settings": Settings(), "github": app, "llm": llm, "metrics": metrics, **fields}
    )


@contextlib.asynccontextmanager
async def background_worker(deps: WorkerSetup, redis_url: str) -> AsyncIterator[ArqRedis]:
    """A real worker running in the background, and a Redis pool to queue work with; the
    worker stops (cancelling what it runs, as a shutdown does) when the block ends."""
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    workers = Workers(deps, redis_url)
    running = asyncio.create_task(workers.run())
    try:
        yield redis
    finally:
        await workers.stop()
        await running
        await redis.aclose()


async def planned(
    redis: ArqRedis,
    run: str,
    diff: Diff,
    units: list[ReviewUnit],
    policy: DebatePolicy | None = None,
) -> RunPlan:
    """Run `run` of REF planned on `redis` with `units` of `diff`, as its coordinator writes
    the plan before any unit starts."""
    plan = RunPlan(
        run_id=run,
        ref=REF,
        check_run_id=1,
        unit_ids=tuple(u.id for u in units),
        policy=policy or DebatePolicy(),
        config=RepoConfig(),
    )
    await LiveRuns(redis, 60.0).begin(plan, diff, units)
    return plan
