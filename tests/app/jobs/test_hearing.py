"""People's replies on Tiebreak's finding threads heard by the hearing job, on a real worker
against the fake GitHub: what the tester and the arbiter read, and what the pull request shows
afterwards — a reply that withdraws its finding, one answered and taken to the arbiter, the
cap; and replies heard while other changes to the same review land: replies on two findings at
once, many replies on one, a push reviewed while a reply is weighed."""

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.llm import LLMRequest, Role
from agents.models.scripted import Reply, ScriptedLLM, by_role
from agents.outcome import Resolution
from app.events import CommentRef, HearingRequest
from app.settings import Settings
from app.store.keys import hearing_job_id, review_job_id
from app.store.queue import ReviewQueue
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.hearing import (
    AUTHOR,
    CONVINCING,
    REASON,
    UNCONVINCING,
    HeldModel,
    accepting,
    deliver,
    finished,
    hearing_model,
    latest_run,
    replied,
    reply_on,
    run_queued,
    tiebreaks_replies,
    two_unresolved_findings,
    unresolved_review,
    untrusted,
)
from tests.kits.rescoped import CORE, EXTRA, rescoped_review, shown, thread_of
from tests.kits.review import STUBBORN, asked, run_worker, summary
from tests.scenarios.debates import accept, evaluations, reject, rulings, warn
from tests.scenarios.reviews import BASE, DIFF, NUMBER, REF, REPO, background_worker, worker_setup
from tests.scenarios.webhooks import SECRET

NEWER = REF.model_copy(update={"head_sha": "9" * 40})


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


async def test_the_authors_convincing_reply_withdraws_the_finding(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    llm = hearing_model(evaluations(accept("F1", "Right: the caller injects log first.")))

    assert deliver(client, reply_on(github, thread, CONVINCING)) == "enqueued"
    await run_queued(github, key, redis_url, llm)

    (heard,) = llm.calls(Role.TESTER)
    assert CONVINCING in untrusted(heard, "reply")
    # The tester weighs it with the code around the change that the debate read.
    assert "lines 1-" in untrusted(heard, "context")
    (answer,) = tiebreaks_replies(github, thread)
    assert answer.body.startswith("Withdrawn: the tester accepts your reply")
    assert "Right: the caller injects log first." in answer.body
    assert github.thread_resolved(REPO, NUMBER, thread)
    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")


@pytest.mark.parametrize(("role", "heard"), [("none", True), ("write", False)])
async def test_a_reply_in_a_thread_its_author_resolved_is_heard_unless_they_may_write(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str, role: str, heard: bool
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    github.set_permission(REPO, AUTHOR, role)
    github.resolve_thread(REPO, NUMBER, thread, by=AUTHOR)
    llm = hearing_model(evaluations(accept("F1", "Right: the caller injects log first.")))

    assert deliver(client, reply_on(github, thread, CONVINCING)) == "enqueued"
    await run_queued(github, key, redis_url, llm)

    # Resolving without write access settles nothing: the finding is still open to a reply.
    assert len(llm.calls(Role.TESTER)) == int(heard)
    assert [r.body.split(":")[0] for r in tiebreaks_replies(github, thread)] == (
        ["Withdrawn"] if heard else []
    )
    assert github.issue_labels(REPO, NUMBER) == ([] if heard else ["Unresolved"])


async def test_an_unconvincing_reply_is_answered_and_the_arbiter_weighs_it(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    github.set_permission(REPO, AUTHOR, "write")

    assert deliver(client, reply_on(github, thread, UNCONVINCING)) == "enqueued"
    await run_queued(github, key, redis_url, hearing_model(evaluations(reject("F1", REASON))))

    (answer,) = tiebreaks_replies(github, thread)
    assert answer.body.startswith("F1 stands: the tester does not accept your reply.")
    assert REASON in answer.body
    assert "`/tiebreak arbitrate` in this thread" in answer.body
    assert not github.thread_resolved(REPO, NUMBER, thread)
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]

    def arbiter(request: LLMRequest) -> Reply:
        heard = [m for d in _disputes(request) for m in d["latest_messages"]]
        said = next(m["text"] for m in heard if m["from"] == f"@{AUTHOR}")
        ruling = warn("F1", "log must be defined before refund runs")
        return rulings(ruling | {"reasoning": f'The author argues "{said}"; that is no proof.'})

    llm = ScriptedLLM(by_role(arbiter=[arbiter]))
    assert deliver(client, reply_on(github, thread, "/tiebreak arbitrate")) == "enqueued"
    await run_queued(github, key, redis_url, llm)

    ruled = github.reviews(REPO, NUMBER)[-1].comments[0].body
    assert f'The author argues "{UNCONVINCING}"' in ruled
    assert github.issue_labels(REPO, NUMBER) == []


@pytest.mark.parametrize("path", [EXTRA, CORE], ids=["debated again", "carried"])
async def test_a_reply_after_a_push_is_weighed_with_its_findings_own_unit(
    github: FakeGitHub, key: AppKey, redis_url: str, path: str
) -> None:
    await rescoped_review(github, key, redis_url)
    thread = thread_of(github, path)
    reply = github.add_review_comment(
        REPO, NUMBER, path, 2, CONVINCING, author=AUTHOR, in_reply_to=thread
    )
    comment = CommentRef(id=reply, kind="review", thread_id=thread)
    request = HearingRequest(pull=REF, login=AUTHOR, comment=comment, text=CONVINCING)
    llm = accepting()

    await run_worker(github, key, redis_url, llm, lambda queue: queue.enqueue_hearing(request))

    # The later run debated the pushed file alone; the other file's finding is carried in the
    # first run's unit: the tester weighs either with the diff its debate read.
    (heard,) = llm.calls(Role.TESTER)
    assert shown(heard) == {path}
    (answer,) = tiebreaks_replies(github, thread)
    assert answer.body.startswith("Withdrawn: the tester accepts your reply")


def _disputes(request: LLMRequest) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(untrusted(request, "disputes"))
    disputes: list[dict[str, Any]] = data["disputes"]
    return disputes


async def test_replies_past_the_cap_get_one_note(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "conversation:\n  max_replies: 1\n")
    llm = hearing_model(evaluations(reject("F1", REASON)))

    for text in (UNCONVINCING, "But really, it is fine.", "Please drop it."):
        assert deliver(client, reply_on(github, thread, text)) == "enqueued"
        await run_queued(github, key, redis_url, llm)

    assert len(llm.calls(Role.TESTER)) == 1
    stands, note = tiebreaks_replies(github, thread)
    assert stands.body.startswith("F1 stands")
    assert note.body.startswith("This pull request has had the 1 replies it may have heard")


async def test_replies_on_two_findings_heard_at_once_withdraw_both(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    threads = await two_unresolved_findings(github, key, redis_url)
    # Each hearing waits until the other is in flight too: both read the review as it was.
    model = HeldModel(ScriptedLLM(by_role()), accepting(), together=2)
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        queue = ReviewQueue(redis)
        requests = [replied(github, thread, CONVINCING) for thread in threads]
        for request in requests:
            await queue.enqueue_hearing(request)
        await asyncio.wait_for(model.arrived.wait(), 30)
        model.released.set()
        results = [await finished(redis, hearing_job_id(r)) for r in requests]
        record = await latest_run(redis)

    assert results == ["withdrawn", "withdrawn"]
    assert [f.resolution for f in record.review.findings] == [Resolution.WITHDRAWN] * 2
    assert "| unresolved |" not in summary(github)
    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")
    assert check.actions == []
    for thread in threads:
        (answer,) = tiebreaks_replies(github, thread)
        assert answer.body.startswith("Withdrawn: the tester accepts your reply")


async def test_many_quick_replies_on_one_finding_are_weighed_once(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "conversation:\n  max_replies: 20\n")
    requests = [replied(github, thread, f"{CONVINCING} ({n})") for n in range(12)]
    llm = accepting()

    async def queue_all(queue: ReviewQueue) -> None:
        for request in requests:
            await queue.enqueue_hearing(request)

    results = await run_worker(github, key, redis_url, llm, queue_all)

    assert len(llm.calls(Role.TESTER)) == 1
    (answer,) = tiebreaks_replies(github, thread)
    assert answer.body.startswith("Withdrawn: the tester accepts your reply")
    assert [str(results[hearing_job_id(r)]) for r in requests].count("withdrawn") == 1
    assert github.thread_resolved(REPO, NUMBER, thread)


async def test_a_push_reviewed_while_a_reply_is_weighed_keeps_the_newer_review(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    model = HeldModel(ScriptedLLM(by_role(**STUBBORN)), accepting())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        queue = ReviewQueue(redis)
        request = replied(github, thread, CONVINCING)
        await queue.enqueue_hearing(request)
        await asyncio.wait_for(model.arrived.wait(), 30)
        push(github)
        await queue.enqueue_review(NEWER)
        assert await finished(redis, review_job_id(NEWER)) == "action_required"
        shown, checks = summary(github), github.check_runs(REPO)
        model.released.set()
        await finished(redis, hearing_job_id(request))
        record = await latest_run(redis)

    assert record.ref == NEWER
    assert [f.resolution for f in record.review.findings] == [Resolution.OPEN]
    assert summary(github) == shown
    assert [c.states for c in github.check_runs(REPO)] == [c.states for c in checks]
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    assert not github.thread_resolved(REPO, NUMBER, thread)
    (answer,) = tiebreaks_replies(github, thread)
    assert answer.body.startswith("Tiebreak reviewed 9999999 while your reply was weighed")

    resolve = asked(github, ("resolve", None), association="OWNER")
    await run_worker(github, key, redis_url, ScriptedLLM(by_role()), resolve.enqueue)

    newest = next(c for c in github.check_runs(REPO) if c.head_sha == NEWER.head_sha)
    assert newest.states[-1] == ("completed", "success")
    assert newest.output["title"] == "Resolved by @octocat"
    assert github.reactions(REPO, resolve.comment_id) == ["eyes", "rocket"]


def push(github: FakeGitHub) -> None:
    """The author pushes NEWER: the same change, one commit later."""
    github.add_pull(
        REPO,
        NUMBER,
        head_sha=NEWER.head_sha,
        base_sha=BASE,
        diff=DIFF,
        head_ref="feature",
    )
