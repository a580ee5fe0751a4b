"""Replies heard while other changes to the same review land, on a real worker against the
fake GitHub: replies on two findings at once, many replies on one, a push reviewed while a
reply is weighed. What the pull request shows afterwards is what a person would see."""

import asyncio

from agents.llm import Role
from agents.outcome import Resolution
from agents.scripted import ScriptedLLM, by_role
from app.store.keys import reply_job_id, review_job_id
from app.store.queue import ReviewQueue
from tests.app.reply_kit import (
    CONVINCING,
    HeldModel,
    accepting,
    finished,
    latest_run,
    replied,
    tiebreaks_replies,
    two_unresolved_findings,
    unresolved_review,
)
from tests.app.review_kit import STUBBORN, asked, run_worker, summary
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.scenarios.reviews import BASE, DIFF, NUMBER, REF, REPO, background_worker, worker_setup

NEWER = REF.model_copy(update={"head_sha": "9" * 40})


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
            await queue.enqueue_reply(request)
        await asyncio.wait_for(model.arrived.wait(), 30)
        model.released.set()
        results = [await finished(redis, reply_job_id(r)) for r in requests]
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
            await queue.enqueue_reply(request)

    results = await run_worker(github, key, redis_url, llm, queue_all)

    assert len(llm.calls(Role.TESTER)) == 1
    (answer,) = tiebreaks_replies(github, thread)
    assert answer.body.startswith("Withdrawn: the tester accepts your reply")
    assert [str(results[reply_job_id(r)]) for r in requests].count("withdrawn") == 1
    assert github.thread_resolved(REPO, NUMBER, thread)


async def test_a_push_reviewed_while_a_reply_is_weighed_keeps_the_newer_review(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    model = HeldModel(ScriptedLLM(by_role(**STUBBORN)), accepting())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        queue = ReviewQueue(redis)
        request = replied(github, thread, CONVINCING)
        await queue.enqueue_reply(request)
        await asyncio.wait_for(model.arrived.wait(), 30)
        push(github)
        await queue.enqueue_review(NEWER)
        assert await finished(redis, review_job_id(NEWER)) == "action_required"
        shown, checks = summary(github), github.check_runs(REPO)
        model.released.set()
        await finished(redis, reply_job_id(request))
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
