"""Reviews and commands on the scenarios' pull request (:mod:`tests.scenarios.reviews`), run by
a real worker, and the summary comments the app tests look for afterwards."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from arq.connections import ArqRedis, RedisSettings, create_pool

from agents.models.llm import LLMClient, LLMRequest, LLMResponse
from agents.models.scripted import Reply, ScriptedLLM, by_role
from app.events import CommandCall, CommandRequest, CommentRef, PullRequestRef
from app.jobs.worker import Workers
from app.publishing.markers import SUMMARY_MARKER
from app.store.keys import review_job_id
from app.store.queue import ReviewQueue
from tests.fakes.github_api import AppKey, FakeGitHub, IssueComment
from tests.scenarios.debates import PAYMENTS, UNDEFINED, agreed_by_role
from tests.scenarios.reviews import (
    NUMBER,
    REF,
    REPO,
    worker_setup,
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
    """Tiebreak's summary comments on the pull request (the App's, with the summary marker):
    there should be one at most."""
    return [
        c
        for c in github.issue_comments(REPO, number)
        if c.author == f"{github.app_slug}[bot]" and c.body.startswith(SUMMARY_MARKER + "\n")
    ]


async def until(condition: Callable[[], bool], seconds: float = 20) -> None:
    """Return once `condition` holds, looked at every 50 ms; fail after `seconds`."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the condition never held")
        await asyncio.sleep(0.05)


async def until_awaited(condition: Callable[[], Awaitable[bool]], seconds: float = 20) -> None:
    """Return once `condition()`, awaited, holds, looked at every 50 ms; fail after `seconds`."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not await condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the condition never held")
        await asyncio.sleep(0.05)


def summary(github: FakeGitHub, number: int = NUMBER) -> str:
    """The body of the pull request's one summary comment."""
    (comment,) = summaries(github, number)
    return comment.body


def agreed() -> ScriptedLLM:
    """A model that raises one finding and fixes it by agreement."""
    return ScriptedLLM(by_role(**agreed_by_role()))


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
    """Queue work with `enqueue`, let a real worker (with :func:`worker_setup`) run everything
    queued, and whatever that queues in turn, and return each job's result by job id."""
    deps = worker_setup(github, key, llm, retry_backoff=retry_backoff, **deps_fields)
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    queue = ReviewQueue(redis)
    try:
        await enqueue(queue)
        await Workers(deps, redis_url, burst=True).run()
        results = await redis.all_job_results()
    finally:
        await redis.aclose()
    return {r.job_id or "": r.result for r in results}


async def run_left(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    llm: LLMClient,
    *,
    heartbeat: float,
    **deps_fields: Any,
) -> dict[str, object]:
    """Once the heartbeats of a worker that stopped (as a shutdown stops it, with `heartbeat`)
    have lapsed, let a new worker run what it left queued: the jobs the shutdown cancelled,
    which arq runs again. Return each job's result by job id."""
    await asyncio.sleep(heartbeat + 0.1)
    return await run_worker(
        github,
        key,
        redis_url,
        llm,
        lambda queue: asyncio.sleep(0),
        heartbeat=heartbeat,
        **deps_fields,
    )


async def run_review(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    llm: LLMClient,
    ref: PullRequestRef = REF,
    *,
    trigger: str | None = None,
    rerun: str | None = None,
    base_sha: str | None = None,
    **deps_fields: Any,
) -> tuple[str | None, None]:
    """Queue a review of `ref` (automatic on `trigger`, else asked for; `rerun` to ask
    again; `base_sha`, the base the event named), run the worker, and return what the review
    job returned."""
    results = await run_worker(
        github,
        key,
        redis_url,
        llm,
        lambda queue: queue.enqueue_review(ref, trigger=trigger, rerun=rerun, base_sha=base_sha),
        **deps_fields,
    )
    outcome = results.get(review_job_id(ref, rerun, trigger=trigger))
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


async def resolved_in_thread(
    github: FakeGitHub, key: AppKey, redis_url: str, thread: int, reason: str
) -> None:
    """A maintainer comments `/tiebreak resolve <reason>` in the finding's thread starting
    with comment `thread`, and a worker carries it out."""
    comment = github.add_review_comment(
        REPO, NUMBER, PAYMENTS, 16, f"/tiebreak resolve {reason}", in_reply_to=thread
    )
    request = CommandRequest(
        pull=REF,
        login="maintainer",
        association="COLLABORATOR",
        comment=CommentRef(id=comment, kind="review", thread_id=thread),
        calls=[CommandCall(name="resolve", text=reason)],
    )
    await run_worker(
        github,
        key,
        redis_url,
        ScriptedLLM(by_role()),
        lambda queue: queue.enqueue_commands(request, "thread"),
    )


class HeldModel:
    """A scripted model whose first call waits until the review is cancelled, or until it is
    released."""

    def __init__(self, llm: ScriptedLLM) -> None:
        self.llm = llm
        self.first_call = asyncio.Event()
        self._held = False
        self._released = asyncio.Event()

    def release(self) -> None:
        """Let the first call, and any after it, be answered."""
        self._released.set()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if not self._held:
            self._held = True
            self.first_call.set()
            await self._released.wait()
        return await self.llm.complete(request)
