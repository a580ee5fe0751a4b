"""The review job on a real arq worker and a real Redis, against the fake GitHub.

What a user sees on the pull request — the review, its suggestions, the label, the check
run's states — after a worker ran the job, with the model scripted.
"""

import asyncio
import json
import time

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import abort_jobs_ss
from arq.jobs import Job, JobStatus
from arq.utils import timestamp_ms

from agents.errors import LLMFatal
from agents.models.scripted import ScriptedLLM, by_role
from app.github.client import DIFF_MEDIA_TYPE
from app.jobs.deps import WorkerDeps
from app.jobs.janitor import resume_orphans
from app.store.keys import OPEN_CHECKS, review_job_id
from app.store.pulls import Pulls
from app.store.queue import ReviewQueue
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import (
    STUBBORN,
    HeldModel,
    agreed,
    run_left,
    run_review,
    until,
    until_awaited,
)
from tests.scenarios.debates import LOG_LINE, PAYMENTS, UNDEFINED
from tests.scenarios.reviews import (
    BASE,
    DIFF,
    HEAD,
    NUMBER,
    REF,
    REPO,
    background_worker,
    worker_setup,
)


def states(github: FakeGitHub) -> list[tuple[str, str | None]]:
    (check,) = github.check_runs(REPO)
    return check.states


def diff_reads(github: FakeGitHub) -> list[int]:
    """GitHub's status to each request for the pull request's diff so far."""
    pulls = github.requests_to("GET", rf"/repos/{REPO}/pulls/{NUMBER}")
    return [r.status for r in pulls if r.headers.get("accept") == DIFF_MEDIA_TYPE]


async def test_an_agreed_fix_lands_as_a_committable_suggestion(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    result, _ = await run_review(github, key, redis_url, agreed())

    assert result == "neutral"
    (review,) = github.reviews(REPO, NUMBER)
    assert (review.event, review.commit_id) == ("COMMENT", HEAD)
    (comment,) = review.comments
    assert (comment.path, comment.line, comment.side) == (PAYMENTS, 16, "RIGHT")
    assert f"```suggestion\n{LOG_LINE}\n```" in comment.body
    # Created in progress (the job is running), then completed: no "queued" call between.
    assert states(github) == [("in_progress", None), ("completed", "neutral")]
    (check,) = github.check_runs(REPO)
    assert check.output["title"]
    assert "unanimous" in check.output["summary"]
    assert github.issue_labels(REPO, NUMBER) == []
    # A run that resumed no one else's cannot have posted before: GitHub is not asked.
    assert github.requests_to("GET", rf"/repos/{REPO}/pulls/{NUMBER}/reviews") == []


async def test_the_diff_and_the_changed_files_are_read_while_the_check_run_is_being_opened(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    def files_read() -> bool:
        asked = github.requests_to("POST", "/graphql")
        return any(HEAD in json.dumps(r.body) and PAYMENTS in json.dumps(r.body) for r in asked)

    with github.holding("POST", rf"/repos/{REPO}/check-runs") as opening:
        review = asyncio.create_task(run_review(github, key, redis_url, agreed()))
        assert await asyncio.to_thread(opening.wait, 30)
        # GitHub has not answered the check run yet: the diff is asked for meanwhile, then
        # the files the agents read beside it, round trips fewer before the first model call.
        await until(lambda: bool(diff_reads(github)) and files_read())
    result, _ = await review

    assert result == "neutral"
    assert states(github) == [("in_progress", None), ("completed", "neutral")]


async def test_the_config_is_read_at_the_event_s_base_while_the_pull_request_is_asked_for(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    def config_read() -> bool:
        return any(
            r.query.get("ref") == BASE
            for r in github.requests_to("GET", rf"/repos/{REPO}/contents/\.github/tiebreak\.yml")
        )

    with github.holding("GET", rf"/repos/{REPO}/pulls/{NUMBER}") as asking:
        review = asyncio.create_task(run_review(github, key, redis_url, agreed(), base_sha=BASE))
        assert await asyncio.to_thread(asking.wait, 30)
        # GitHub has not answered the pull request yet: its config is read meanwhile.
        await until(config_read)
    result, _ = await review

    assert result == "neutral"


async def test_the_diff_is_asked_for_while_the_pull_request_and_its_config_are_read(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    with github.holding("GET", rf"/repos/{REPO}/contents/\.github/tiebreak\.yml") as reading:
        review = asyncio.create_task(run_review(github, key, redis_url, agreed(), base_sha=BASE))
        assert await asyncio.to_thread(reading.wait, 30)
        # GitHub has not answered the config yet: the diff is read meanwhile, not after it.
        await until(lambda: bool(diff_reads(github)))
    result, _ = await review

    assert result == "neutral"
    # Asked for once: the plan reads the diff that came with the pull request.
    assert diff_reads(github) == [200]


async def test_an_event_the_config_declines_lets_the_diff_read_beside_it_go(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF, draft=True)
    github.fail_next("GET", rf"/repos/{REPO}/pulls/{NUMBER}", 502, accept=DIFF_MEDIA_TYPE)
    llm = agreed()

    with github.holding("GET", rf"/repos/{REPO}/contents/\.github/tiebreak\.yml"):
        review = asyncio.create_task(
            run_review(github, key, redis_url, llm, base_sha=BASE, trigger="opened")
        )
        # The diff asked for beside the config fails before the config declines the draft.
        await until(lambda: diff_reads(github) == [502])
    result, _ = await review

    # No failure of a run that declined it: the draft is left quietly.
    assert result == "not reviewed: drafts are reviewed once they are ready"
    assert github.check_runs(REPO) == []
    assert llm.requests == []


async def test_a_draft_marked_ready_at_the_head_it_was_declined_at_gets_its_review(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF, draft=True)
    declined, _ = await run_review(github, key, redis_url, agreed(), trigger="opened")
    assert declined == "not reviewed: drafts are reviewed once they are ready"

    # Marked ready without a push, well within the hour arq keeps the opened job's result.
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF)
    result, _ = await run_review(github, key, redis_url, agreed(), trigger="ready_for_review")

    assert result == "neutral"
    (check,) = github.check_runs(REPO)
    assert (check.head_sha, check.states[-1]) == (HEAD, ("completed", "neutral"))
    (review,) = github.reviews(REPO, NUMBER)
    assert review.commit_id == HEAD


async def test_a_head_reviewed_before_it_was_turned_into_a_draft_is_not_reviewed_again(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    first, _ = await run_review(github, key, redis_url, agreed(), trigger="opened")
    assert first == "neutral"

    # Turned into a draft and marked ready again, at the same head.
    llm = agreed()
    result, _ = await run_review(github, key, redis_url, llm, trigger="ready_for_review")

    assert result == "not reviewed: its head was reviewed already"
    assert llm.requests == []
    assert len(github.check_runs(REPO)) == 1
    assert len(github.reviews(REPO, NUMBER)) == 1


async def test_a_base_that_moved_since_the_event_reads_the_config_at_the_pull_request_s_base(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", "enabled: false\n")
    llm = agreed()

    result, _ = await run_review(github, key, redis_url, llm, base_sha="c" * 40)

    assert result == "disabled by the repository's config"
    assert states(github)[-1] == ("completed", "skipped")
    assert llm.requests == []


async def test_an_unresolved_finding_labels_the_pull_request_and_asks_for_action(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")

    result, _ = await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))

    assert result == "action_required"
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    (label,) = [item for item in github.labels(REPO) if item.name == "Unresolved"]
    assert label.color == "d93f0b"
    (review,) = github.reviews(REPO, NUMBER)
    assert "log is a builtin." in review.comments[0].body
    assert states(github)[-1] == ("completed", "action_required")


async def test_the_config_is_read_from_the_base_branch_only(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    # The change under review tries to turn Tiebreak off for itself.
    github.set_file(REPO, HEAD, ".github/tiebreak.yml", "enabled: false\n")

    result, _ = await run_review(github, key, redis_url, agreed())

    assert result == "neutral"
    assert len(github.reviews(REPO, NUMBER)) == 1


async def test_a_base_config_can_turn_tiebreak_off(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", "enabled: false\n")
    llm = ScriptedLLM(by_role())

    result, _ = await run_review(github, key, redis_url, llm)

    assert result == "disabled by the repository's config"
    assert states(github)[-1] == ("completed", "skipped")
    assert llm.requests == []
    assert github.reviews(REPO, NUMBER) == []


@pytest.mark.parametrize(
    ("config", "problem", "line"),
    [
        ("enabled: true\ndebate: [unclosed\n", "is not valid YAML", 2),
        ("enabled: true\nrounds: 3\n", "rounds is not a Tiebreak option", 2),
        ("debate:\n  max_rounds: 0\n", "debate.max_rounds must be a whole number from 1", 2),
        ("max_inline_comments: many\n", "max_inline_comments must be a whole number", 1),
        ("paths:\n  exclude: vendor/**\n", "paths.exclude must be a list of globs", 2),
    ],
)
async def test_a_broken_config_falls_back_to_the_defaults_and_says_so_on_its_line(
    github: FakeGitHub, key: AppKey, redis_url: str, config: str, problem: str, line: int
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", config)

    result, _ = await run_review(github, key, redis_url, agreed())

    assert result == "neutral"  # reviewed on the defaults
    (check,) = github.check_runs(REPO)
    assert "was ignored** (defaults used)" in check.output["summary"]
    assert problem in check.output["summary"]
    config_notes = [a for a in check.annotations if a["path"] == ".github/tiebreak.yml"]
    assert [(a["start_line"], a["annotation_level"]) for a in config_notes] == [(line, "warning")]
    assert problem in config_notes[0]["message"]
    # The review's own annotations are there too.
    assert any(a["path"] == PAYMENTS for a in check.annotations)


async def test_a_configs_warnings_are_in_the_summary_and_the_config_is_read_all_the_same(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    config = "label: Checked\nignore_authors: [renovate]\ndebate:\n  arbitration: false\n"
    github.set_file(REPO, BASE, ".github/tiebreak.yml", config)

    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))

    (check,) = github.check_runs(REPO)
    summary = check.output["summary"]
    assert "was ignored" not in summary
    assert "**.github/tiebreak.yml was read, with warnings**" in summary
    assert "ignore_authors.0: 'renovate' looks like a bot" in summary
    (note,) = [a for a in check.annotations if a["path"] == ".github/tiebreak.yml"]
    assert (note["start_line"], note["title"]) == (2, "Tiebreak warns about this line")
    assert github.issue_labels(REPO, NUMBER) == ["Checked"]  # the config's, not the default


async def test_a_diff_too_large_for_the_diff_media_type_is_read_from_the_files_api(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF, too_large=True)

    result, _ = await run_review(github, key, redis_url, agreed())

    assert result == "neutral"
    assert github.requests_to("GET", rf"/repos/{REPO}/pulls/{NUMBER}/files")
    (review,) = github.reviews(REPO, NUMBER)
    assert review.comments[0].line == 16


async def test_a_pull_request_too_large_for_the_diff_media_type_may_delete_a_file(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    deleted = (
        "diff --git a/app/legacy.py b/app/legacy.py\n"
        "deleted file mode 100644\n"
        "index 3b18e51..0000000\n"
        "--- a/app/legacy.py\n"
        "+++ /dev/null\n"
        "@@ -1,2 +0,0 @@\n"
        "-def refund(payment):\n"
        "-    return payment.amount\n"
    )
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=deleted + DIFF, too_large=True)

    result, _ = await run_review(github, key, redis_url, agreed())

    assert result == "neutral"
    (review,) = github.reviews(REPO, NUMBER)
    (comment,) = review.comments
    assert (comment.path, comment.line) == (PAYMENTS, 16)
    assert f"```suggestion\n{LOG_LINE}\n```" in comment.body


async def test_a_model_that_refuses_every_call_fails_the_check_run_clearly(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    llm = ScriptedLLM(lambda request: LLMFatal("the Anthropic API refused the call: bad key"))

    result, _ = await run_review(github, key, redis_url, llm)

    assert result == "failed: the Anthropic API refused the call: bad key"
    assert states(github)[-1] == ("completed", "failure")
    (check,) = github.check_runs(REPO)
    assert "bad key" in check.output["summary"]
    assert github.reviews(REPO, NUMBER) == []


async def test_a_head_that_moved_on_github_is_not_reviewed(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.add_pull(REPO, NUMBER, head_sha="c" * 40, base_sha=BASE, diff=DIFF)
    llm = ScriptedLLM(by_role())

    result, _ = await run_review(github, key, redis_url, llm)

    assert result == "superseded: the pull request has a newer head"
    assert states(github)[-1] == ("completed", "cancelled")
    assert llm.requests == []
    assert github.reviews(REPO, NUMBER) == []


async def test_a_review_superseded_in_the_queue_never_starts(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        newer = REF.model_copy(update={"head_sha": "c" * 40})
        await ReviewQueue(redis).enqueue_review(REF)
        await ReviewQueue(redis).enqueue_review(newer, replaces=HEAD)
    finally:
        await redis.aclose()
    github.add_pull(REPO, NUMBER, head_sha="c" * 40, base_sha=BASE, diff=DIFF)

    result, _ = await run_review(github, key, redis_url, agreed(), newer)

    assert result == "neutral"
    # Only the newer head got a check run: the older job was aborted before it started.
    assert [c.head_sha for c in github.check_runs(REPO)] == ["c" * 40]
    assert len(github.reviews(REPO, NUMBER)) == 1


async def test_a_review_found_superseded_as_it_starts_ends_quietly(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    newer = REF.model_copy(update={"head_sha": "c" * 40})
    github.add_pull(REPO, NUMBER, head_sha=newer.head_sha, base_sha=BASE, diff=DIFF)
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        # The push was heard first: the older head's delivery, heard late, aborts nothing,
        # and its review is queued all the same.
        await ReviewQueue(redis).enqueue_review(newer, replaces=HEAD)
        await ReviewQueue(redis).enqueue_review(REF)
    finally:
        await redis.aclose()

    result, _ = await run_review(github, key, redis_url, agreed())

    # GitHub says its head is no longer the pull request's: no check run, nothing to end.
    assert result == "superseded before it started"
    assert [c.head_sha for c in github.check_runs(REPO)] == ["c" * 40]
    assert len(github.reviews(REPO, NUMBER)) == 1


async def test_a_push_during_a_review_cancels_it_and_completes_its_check_run(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    newer = REF.model_copy(update={"head_sha": "c" * 40})
    model = HeldModel(agreed())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        await ReviewQueue(redis).enqueue_review(REF)
        await asyncio.wait_for(model.first_call.wait(), 20)
        github.add_pull(REPO, NUMBER, head_sha=newer.head_sha, base_sha=BASE, diff=DIFF)
        await ReviewQueue(redis).enqueue_review(newer, replaces=HEAD)

        def completed(head: str) -> bool:
            runs = [c for c in github.check_runs(REPO) if c.head_sha == head]
            return bool(runs) and runs[0].status == "completed"

        await until(lambda: completed(HEAD) and completed(newer.head_sha))

    old, new = github.check_runs(REPO)
    assert old.states[-1] == ("completed", "cancelled")
    assert old.output["title"] == "Superseded by a newer push (ccccccc)"
    assert new.states[-1] == ("completed", "neutral")
    (review,) = github.reviews(REPO, NUMBER)
    assert review.commit_id == newer.head_sha


async def _store(redis_url: str) -> tuple[ArqRedis, Pulls]:
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    return redis, Pulls(redis)


async def test_the_latest_run_is_remembered_for_later_commands(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_review(github, key, redis_url, agreed())

    redis, pulls = await _store(redis_url)
    try:
        record = await pulls.latest(REF)
    finally:
        await redis.aclose()
    assert record is not None
    assert (record.conclusion, record.ref, record.diff) == ("neutral", REF, DIFF)
    assert [f.finding.claim for f in record.review.findings] == [UNDEFINED["claim"]]
    (check,) = github.check_runs(REPO)
    assert record.check_run_id == check.id


async def test_a_budget_set_for_the_next_run_caps_it_once(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    redis, pulls = await _store(redis_url)
    try:
        await pulls.set_budget(REF, 10_000)
        llm = ScriptedLLM(by_role(**STUBBORN))
        result, _ = await run_review(github, key, redis_url, llm)
        left = await pulls.take_budget(REF)
    finally:
        await redis.aclose()

    # Ten thousand billed tokens end the deadlock before it reaches the arbiter (whom the
    # script does not expect): the finding stays unresolved, and the budget is used up.
    assert result == "action_required"
    assert len(llm.requests) < 4
    assert left is None


async def test_a_stopped_review_completes_its_check_run_as_stopped(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    model = HeldModel(agreed())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        await ReviewQueue(redis).enqueue_review(REF)
        await asyncio.wait_for(model.first_call.wait(), 20)
        job_id = review_job_id(REF)
        await Pulls(redis).request_stop(job_id, "octocat")
        await redis.zadd(abort_jobs_ss, {job_id: timestamp_ms()})
        await until(lambda: github.check_runs(REPO)[0].status == "completed")

    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "cancelled")
    assert check.output["title"] == "Stopped by @octocat"
    assert github.reviews(REPO, NUMBER) == []


async def test_a_review_a_shutdown_cut_short_as_it_read_its_config_is_done_by_the_next_worker(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    setup = worker_setup(github, key, agreed(), heartbeat=1.0)
    with github.holding("GET", rf"/repos/{REPO}/contents/\.github/tiebreak\.yml") as reading:
        async with background_worker(setup, redis_url) as redis:
            await ReviewQueue(redis).enqueue_review(REF)
            assert await asyncio.to_thread(reading.wait, 20)
        # The worker stopped as a deploy stops it, before the review had a check run.

    results = await run_left(github, key, redis_url, agreed(), heartbeat=1.0)

    assert results[review_job_id(REF)] == "neutral"
    assert states(github) == [("in_progress", None), ("completed", "neutral")]
    assert len(github.reviews(REPO, NUMBER)) == 1


async def test_a_review_stopped_as_it_read_its_config_ends_there_without_a_check_run(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    setup = worker_setup(github, key, agreed(), heartbeat=1.0)
    job_id = review_job_id(REF)
    with github.holding("GET", rf"/repos/{REPO}/contents/\.github/tiebreak\.yml") as reading:
        async with background_worker(setup, redis_url) as redis:
            await ReviewQueue(redis).enqueue_review(REF)
            assert await asyncio.to_thread(reading.wait, 20)
            # `/tiebreak stop`, as the command asks for it.
            await Pulls(redis).request_stop(job_id, "octocat")
            await ReviewQueue(redis).abort(job_id)

            async def ended() -> bool:
                return await Job(job_id, redis).status() is JobStatus.complete

            await until_awaited(ended)
            await asyncio.sleep(1.1)  # its heartbeat lapses
            # Ended, it is no orphan for the janitor to pick up again.
            assert await resume_orphans(WorkerDeps.started(setup, redis), now=time.time()) == 0

    assert github.check_runs(REPO) == []
    assert github.reviews(REPO, NUMBER) == []


async def test_a_review_a_shutdown_cut_short_before_its_plan_completes_the_check_run_it_opened(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    setup = worker_setup(github, key, agreed(), heartbeat=1.0)
    # The files the agents read beside the diff, asked for as the check run is opened.
    with github.holding("POST", "/graphql") as reading:
        async with background_worker(setup, redis_url) as redis:
            await ReviewQueue(redis).enqueue_review(REF)
            assert await asyncio.to_thread(reading.wait, 20)

            async def opened() -> bool:
                return bool(await redis.zcard(OPEN_CHECKS))

            await until_awaited(opened)
        # The worker stopped as a deploy stops it, its check run open, before its plan.

    results = await run_left(github, key, redis_url, agreed(), heartbeat=1.0)

    assert results[review_job_id(REF)] == "neutral"
    # The check run it opened, completed: not a second one beside it, timed out later.
    assert states(github) == [("in_progress", None), ("completed", "neutral")]
    assert len(github.reviews(REPO, NUMBER)) == 1


async def test_a_diff_github_gives_malformed_fails_the_check_run_clearly(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    # A hunk that says three lines and holds one: no unified diff.
    broken = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n+x = 1\n"
    github.add_pull(
        REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=broken, files=[{"filename": "x.py"}]
    )
    llm = ScriptedLLM(by_role())

    result, _ = await run_review(github, key, redis_url, llm)

    assert str(result).startswith("failed: ")
    (check,) = github.check_runs(REPO)
    assert check.states == [("in_progress", None), ("completed", "failure")]
    assert "malformed diff" in check.output["summary"]
    assert llm.requests == []


async def test_a_config_that_cannot_be_fetched_still_gets_a_failed_check_run(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.fail_next("GET", r"/repos/.*/contents/\.github/tiebreak\.yml", 500)
    llm = ScriptedLLM(by_role())

    result, _ = await run_review(github, key, redis_url, llm, trigger="opened")

    assert str(result).startswith("failed: ")
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "failure")
    assert "500" in check.output["summary"]
    assert llm.requests == []
