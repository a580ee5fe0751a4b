"""A pull request on the fake GitHub, and a real worker to run Tiebreak's jobs on it."""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from arq.connections import ArqRedis, RedisSettings, create_pool

from agents.llm import LLMClient
from agents.scripted import Reply, ScriptedLLM, by_role
from app.events import CommandCall, CommandRequest, CommentRef, PullRequestRef
from app.github.client import GitHubApp
from app.jobs.deps import WorkerDeps
from app.jobs.worker import Workers
from app.publishing.markers import SUMMARY_MARKER
from app.settings import Settings
from app.store.queue import ReviewQueue, review_job_id
from app.telemetry.metrics import Metrics
from tests.agents.kit import (
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    UNDEFINED,
    agreed_by_role,
    git_diff,
)
from tests.fakes.github_api import AppKey, FakeGitHub, IssueComment

REPO, NUMBER, INSTALLATION, APP_ID = "Codertocat/Hello-World", 2, 1, 42
HEAD, BASE = "a" * 40, "b" * 40
DIFF = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})
REF = PullRequestRef(
    installation_id=INSTALLATION,
    owner="Codertocat",
    repo="Hello-World",
    number=NUMBER,
    head_sha=HEAD,
)
STUBBORN: dict[str, list[Reply]] = {
    "tester": [
        {"findings": [UNDEFINED]},
        {
            "evaluations": [
                {"finding_id": "F1", "decision": "reject", "reason": "Nothing defines log."}
            ]
        },
    ],
    "coder": [
        {"answers": [{"finding_id": "F1", "stance": "dispute", "argument": "log is a builtin."}]}
    ]
    * 2,
}


def summaries(github: FakeGitHub, number: int = NUMBER) -> list[IssueComment]:
    """Tiebreak's summary comments on the pull request: there should be one at most."""
    return [
        c
        for c in github.issue_comments(REPO, number)
        if c.author_type == "Bot" and c.body.startswith(SUMMARY_MARKER + "\n")
    ]


def summary(github: FakeGitHub, number: int = NUMBER) -> str:
    """The body of the pull request's one summary comment."""
    (comment,) = summaries(github, number)
    return comment.body


def agreed() -> ScriptedLLM:
    """A model that raises one finding and fixes it by agreement."""
    return ScriptedLLM(by_role(**agreed_by_role()))


def worker_deps(
    github: FakeGitHub,
    key: AppKey,
    llm: LLMClient,
    *,
    retry_backoff: float | None = None,
    **deps_fields: Any,
) -> WorkerDeps:
    """A worker's dependencies on the fake GitHub. GitHub calls are not retried unless
    `retry_backoff` scales the production policy's waits; `deps_fields` override the others
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
    return WorkerDeps(
        **{"settings": Settings(), "github": app, "llm": llm, "metrics": metrics, **deps_fields}
    )


@contextlib.asynccontextmanager
async def background_worker(deps: WorkerDeps, redis_url: str) -> AsyncIterator[ArqRedis]:
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


async def run_worker(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    llm: LLMClient,
    enqueue: Callable[[ReviewQueue], Awaitable[object]],
    *,
    retry_backoff: float | None = None,
    **deps_fields: Any,
) -> dict[str, object]:
    """Queue work with `enqueue`, let a real worker (with :func:`worker_deps`) run everything
    queued, and whatever that queues in turn, and return each job's result by job id."""
    deps = worker_deps(github, key, llm, retry_backoff=retry_backoff, **deps_fields)
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    queue = ReviewQueue(redis)
    try:
        await enqueue(queue)
        await Workers(deps, redis_url, burst=True).run()
        results = await redis.all_job_results()
    finally:
        await redis.aclose()
    return {r.job_id or "": r.result for r in results}


async def run_review(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    llm: LLMClient,
    ref: PullRequestRef = REF,
    *,
    trigger: str | None = None,
    rerun: str | None = None,
    **deps_fields: Any,
) -> tuple[str | None, None]:
    """Queue a review of `ref` (automatic on `trigger`, else asked for; `rerun` to ask
    again), run the worker, and return what the review job returned."""
    results = await run_worker(
        github,
        key,
        redis_url,
        llm,
        lambda queue: queue.enqueue_review(ref, trigger=trigger, rerun=rerun),
        **deps_fields,
    )
    outcome = results.get(review_job_id(ref, rerun))
    return (None if outcome is None else str(outcome)), None


@dataclass(frozen=True)
class Asked:
    comment_id: int
    enqueue: Callable[[ReviewQueue], Awaitable[object]]


def asked(
    github: FakeGitHub,
    *commands: tuple[str | None, int | None],
    login: str = "octocat",
    association: str = "CONTRIBUTOR",
    text: str = "",
) -> "Asked":
    """A comment by `login` on the pull request, carrying `commands`."""
    comment_id = github.add_issue_comment(REPO, NUMBER, "/tiebreak …", author=login)
    request = CommandRequest(
        pull=REF,
        login=login,
        association=association,
        comment=CommentRef(id=comment_id, kind="issue", thread_id=comment_id),
        calls=[CommandCall(name=name, argument=argument, text=text) for name, argument in commands],
    )

    async def enqueue(queue: ReviewQueue) -> object:
        return await queue.enqueue_commands(request, f"comment-{comment_id}")

    return Asked(comment_id, enqueue)
