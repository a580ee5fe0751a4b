"""People's replies on Tiebreak's finding threads, for the app tests: a review that leaves
findings open, the replies a person makes on their threads and their delivery to the webhook,
what the tester reads of them, what Tiebreak answers there, and a model that holds its calls
until a test lets them go."""

import asyncio
import re
from collections.abc import Callable
from typing import Any

from arq.connections import ArqRedis
from arq.jobs import Job
from fastapi.testclient import TestClient

from agents.models.llm import LLMClient, LLMRequest, LLMResponse, Role
from agents.models.scripted import Reply, ScriptedLLM, by_role
from app.events import CommentRef, HearingRequest
from app.publishing.publication import RunRecord
from app.store.pulls import Pulls
from tests.fakes.github_api import AppKey, FakeGitHub, ReviewComment
from tests.kits.review import STUBBORN, run_review, run_worker
from tests.scenarios.debates import (
    NEGATIVE,
    PAYMENTS,
    UNDEFINED,
    accept,
    answers,
    dispute,
    evaluations,
    reject,
    report,
)
from tests.scenarios.reviews import BASE, NUMBER, REF, REPO
from tests.scenarios.webhooks import payload, signed

AUTHOR = "octocat"
"""Who opened the scenarios' pull request."""

CONVINCING = "This is intended: log is injected into the module by the caller before refund runs."
UNCONVINCING = "I think log is fine here, it always worked on my machine."
REASON = "Nothing in the diff or the module defines log; the caller injects nothing."

NO_ARBITER = "debate:\n  arbitration: false\n"

TWO_STUBBORN: dict[str, list[Reply]] = {
    "tester": [
        report(UNDEFINED, NEGATIVE),
        evaluations(reject("F1", "Nothing defines log."), reject("F2", "-1 passes the check.")),
    ],
    "coder": [answers(dispute("F1", "log is a builtin."), dispute("F2", "Amounts are positive."))]
    * 2,
}
"""The tester raises UNDEFINED (F1, line 16) and NEGATIVE (F2, line 13), the coder disputes
both to the end: with the arbiter off, both stay open."""


async def unresolved_review(github: FakeGitHub, key: AppKey, redis_url: str, config: str) -> int:
    """A review whose one finding stays open; the id of the thread Tiebreak started on it."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", NO_ARBITER + config)
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    (tiebreaks,) = github.reviews(REPO, NUMBER)[0].comments
    return tiebreaks.id


async def two_unresolved_findings(github: FakeGitHub, key: AppKey, redis_url: str) -> list[int]:
    """A review whose two findings stay open; the ids of the threads Tiebreak started on
    them, F1's first."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", NO_ARBITER)
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**TWO_STUBBORN)))
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    comments = github.reviews(REPO, NUMBER)[0].comments
    return [c.id for c in sorted(comments, key=lambda c: -(c.line or 0))]


def reply_on(
    github: FakeGitHub, thread: int, body: str, *, login: str = AUTHOR, kind: str = "User"
) -> dict[str, Any]:
    """`login` replies `body` in the thread; the delivery GitHub sends for it."""
    comment_id = github.add_review_comment(
        REPO, NUMBER, PAYMENTS, 16, body, author=login, author_type=kind, in_reply_to=thread
    )
    delivery = payload("pull_request_review_comment/created")
    delivery["pull_request"]["number"] = NUMBER
    delivery["comment"].update(
        id=comment_id, body=body, in_reply_to_id=thread, author_association="CONTRIBUTOR"
    )
    delivery["comment"]["user"].update(login=login, type=kind)
    delivery["sender"].update(login=login, type=kind)
    return delivery


def replied(github: FakeGitHub, thread: int, body: str) -> HearingRequest:
    """The author replies `body` in the thread; the reply as the webhook queues it."""
    root = next(c for c in github.review_comments(REPO, NUMBER) if c.id == thread)
    assert root.line is not None
    comment_id = github.add_review_comment(
        REPO, NUMBER, PAYMENTS, root.line, body, author=AUTHOR, in_reply_to=thread
    )
    comment = CommentRef(id=comment_id, kind="review", thread_id=thread)
    return HearingRequest(pull=REF, login=AUTHOR, comment=comment, text=body)


def deliver(client: TestClient, delivery: dict[str, Any], event: str = "") -> str:
    raw, headers = signed(event or "pull_request_review_comment", delivery)
    answer = client.post("/api/github/webhooks", content=raw, headers=headers)
    assert answer.status_code in (200, 202)
    outcome: str = answer.json()["outcome"]
    return outcome


def untrusted(request: LLMRequest, kind: str) -> str:
    """The content of the request's `<untrusted-kind-…>` block."""
    text = "\n".join(block.text for block in request.blocks)
    found = re.search(rf"<(untrusted-{kind}-[0-9a-f]+)>\n(.*)\n</\1>", text, re.DOTALL)
    assert found is not None, f"no {kind} block in the request"
    return found[2]


async def run_queued(github: FakeGitHub, key: AppKey, redis_url: str, llm: LLMClient) -> None:
    """Run what is queued on a real worker, to the end."""

    async def nothing_more(queue: object) -> None:
        return None

    await run_worker(github, key, redis_url, llm, nothing_more)


def tiebreaks_replies(github: FakeGitHub, thread: int) -> list[ReviewComment]:
    return [
        c
        for c in github.review_comments(REPO, NUMBER)
        if c.author == f"{github.app_slug}[bot]" and c.in_reply_to == thread
    ]


def hearing_model(*decisions: Reply) -> ScriptedLLM:
    return ScriptedLLM(by_role(tester=list(decisions)))


def accepting() -> ScriptedLLM:
    """A tester that accepts every reply it weighs, whatever the finding."""
    return ScriptedLLM(lambda request: evaluations(accept(request.subject[0], "Right.")))


def is_hearing(request: LLMRequest) -> bool:
    """Whether the call weighs a person's reply (its request carries the reply)."""
    return request.role is Role.TESTER and any(
        "<untrusted-reply-" in b.text for b in request.blocks
    )


class HeldModel:
    """A model whose calls that `held` picks wait until the test lets them go, then are
    answered by `answers`; every other call goes to `rest` at once."""

    def __init__(
        self,
        rest: LLMClient,
        answers: LLMClient,
        held: Callable[[LLMRequest], bool] = is_hearing,
        *,
        together: int = 1,
    ) -> None:
        self.rest, self.answers, self.held = rest, answers, held
        self.together = together
        self.waiting = 0
        self.arrived = asyncio.Event()
        """Set once `together` held calls are waiting."""
        self.released = asyncio.Event()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if not self.held(request):
            return await self.rest.complete(request)
        self.waiting += 1
        if self.waiting >= self.together:
            self.arrived.set()
        await self.released.wait()
        return await self.answers.complete(request)


async def finished(redis: ArqRedis, job_id: str) -> object:
    """What the job returned, once it has finished."""
    return await Job(job_id, redis).result(timeout=60, poll_delay=0.05)


async def latest_run(redis: ArqRedis) -> RunRecord:
    record = await Pulls(redis).latest(REF)
    assert record is not None
    return record
