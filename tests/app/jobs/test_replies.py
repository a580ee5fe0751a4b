"""Replies heard while other changes to the same review land, on a real worker against the
fake GitHub: replies on two findings at once, many replies on one. What the pull request shows
afterwards is what a person would see."""

import asyncio

from agents.llm import Role
from agents.outcome import Resolution
from agents.scripted import ScriptedLLM, by_role
from app.store.queue import ReviewQueue, reply_job_id
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
from tests.app.review_kit import run_worker, summary
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.scenarios.reviews import NUMBER, REPO, background_worker, worker_deps


async def test_replies_on_two_findings_heard_at_once_withdraw_both(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    threads = await two_unresolved_findings(github, key, redis_url)
    # Each hearing waits until the other is in flight too: both read the review as it was.
    model = HeldModel(ScriptedLLM(by_role()), accepting(), together=2)
    async with background_worker(worker_deps(github, key, model), redis_url) as redis:
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
    assert sorted(str(results[reply_job_id(r)]) for r in requests).count("withdrawn") == 1
    assert github.thread_resolved(REPO, NUMBER, thread)
