"""Slash commands on a real worker against the fake GitHub: what the commenter sees."""

import asyncio
import time

from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.jobs import Job, JobStatus

from agents.models.llm import LLMRequest, Role
from agents.models.scripted import Reply, ScriptedLLM, by_role
from agents.outcome import Resolution
from app.events import CommandCall, CommandRequest, CommentRef
from app.jobs.deps import WorkerDeps
from app.jobs.janitor import resume_orphans
from app.settings import Settings
from app.store.allowance import DailyAllowance
from app.store.keys import commands_job_id, in_progress, resume_job_id, review_job_id
from app.store.pulls import Pulls
from app.store.queue import ReviewQueue
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits import review
from tests.kits.hearing import HeldModel, finished, latest_run
from tests.kits.rescoped import CORE, EXTRA, rescoped_review, shown
from tests.kits.review import (
    STUBBORN,
    Asked,
    agreed,
    asked,
    run_review,
    run_worker,
    summaries,
    summary,
    until_awaited,
)
from tests.scenarios.debates import LOG_LINE, PAYMENTS, PAYMENTS_AFTER, rulings, warn
from tests.scenarios.reviews import BASE, DIFF, NUMBER, REF, REPO, background_worker, worker_setup

PULL = REF.model_copy()


async def run_command(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    *commands: tuple[str | None, int | None],
    llm: ScriptedLLM | None = None,
) -> Asked:
    """The pull request's owner comments `commands`; a worker runs them."""
    comment = asked(github, *commands, association="OWNER")
    await run_worker(github, key, redis_url, llm or ScriptedLLM(by_role()), comment.enqueue)
    return comment


def replies(github: FakeGitHub) -> list[str]:
    """Tiebreak's answers in the conversation (not its summary comment)."""
    kept = {c.id for c in summaries(github)}
    return [
        c.body
        for c in github.issue_comments(REPO, NUMBER)
        if c.author_type == "Bot" and c.id not in kept
    ]


async def test_help_answers_with_the_commands_and_reacts(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_permission(REPO, "octocat", "write")
    comment = asked(github, ("help", None))

    await run_worker(github, key, redis_url, ScriptedLLM(by_role()), comment.enqueue)

    (reply,) = replies(github)
    assert "`/tiebreak apply`" in reply
    assert github.reactions(REPO, comment.comment_id) == ["eyes", "rocket"]


async def test_someone_without_write_access_is_refused_and_nothing_runs(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_permission(REPO, "octocat", "read")
    comment = asked(github, ("review", None))
    llm = ScriptedLLM(by_role())

    await run_worker(github, key, redis_url, llm, comment.enqueue)

    (reply,) = replies(github)
    assert "only people with write access" in reply
    assert github.reactions(REPO, comment.comment_id) == ["eyes", "confused"]
    assert github.check_runs(REPO) == []
    assert llm.requests == []


async def test_an_unknown_command_gets_the_help(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_permission(REPO, "octocat", "maintain")
    comment = asked(github, (None, None), text="deploy")

    await run_worker(github, key, redis_url, ScriptedLLM(by_role()), comment.enqueue)

    (reply,) = replies(github)
    assert reply.startswith("I don't know `/tiebreak deploy`.")
    assert github.reactions(REPO, comment.comment_id)[-1] == "confused"


async def test_a_request_of_many_commands_runs_five_and_answers_unknown_lines_once(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    unknown: tuple[str | None, int | None] = (None, None)
    commands = [unknown, ("stop", None), unknown, ("stop", None), ("help", None)]
    commands += [unknown, ("resolve", None), ("apply", None), ("arbitrate", None)] * 3
    await run_command(github, key, redis_url, *commands)

    answers = replies(github)
    assert [a.split("\n")[0] for a in answers] == [
        "I don't know `/tiebreak`.",
        "No review of this pull request is running.",
        "Tiebreak's commands, each on a line of its own (`/tiebreak` or `@tiebreak`):",
        "Tiebreak has not reviewed this pull request yet.",
        "Tiebreak has not reviewed this pull request yet.",
    ]


async def test_review_reviews_the_head_again(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_review(github, key, redis_url, agreed())
    comment = asked(github, ("review", None), association="OWNER")

    await run_worker(github, key, redis_url, agreed(), comment.enqueue)

    assert [c.head_sha for c in github.check_runs(REPO)] == [REF.head_sha] * 2
    # Debated again, and nothing new: no second review, the summary edited in place.
    assert len(github.reviews(REPO, NUMBER)) == 1
    assert "again: a review of the same commit was asked for" in summary(github)


async def test_resolve_accepts_the_open_findings(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_file(REPO, "b" * 40, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    github.set_permission(REPO, "octocat", "admin")

    await run_worker(
        github, key, redis_url, ScriptedLLM(by_role()), asked(github, ("resolve", None)).enqueue
    )

    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")
    assert check.output["title"] == "Resolved by @octocat"
    assert github.issue_labels(REPO, NUMBER) == []
    # The summary comment says so too, in place.
    (comment,) = summaries(github)
    assert comment.body.split("\n")[1].startswith("**Resolved by @\u200doctocat**")
    assert "| unresolved |" in comment.body


async def test_resolve_without_a_review_says_so(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_command(github, key, redis_url, ("resolve", None))

    assert replies(github) == ["Tiebreak has not reviewed this pull request yet."]


async def test_budget_is_kept_for_the_next_review(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_command(github, key, redis_url, ("budget", 50_000))

    assert "up to 50,000 billed tokens" in replies(github)[0]
    redis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        assert await Pulls(redis).take_budget(PULL) == 50_000
    finally:
        await redis.aclose()


async def test_stop_with_nothing_running_says_so(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_command(github, key, redis_url, ("stop", None))

    assert replies(github) == ["No review of this pull request is running."]


async def ended(redis: ArqRedis, job_id: str) -> bool:
    return await Job(job_id, redis).status() is JobStatus.complete


async def test_stop_stops_a_review_the_janitor_resumed(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    run = review_job_id(REF)
    dying = review.HeldModel(agreed())
    async with background_worker(worker_setup(github, key, dying, heartbeat=1.0), redis_url) as r:
        await ReviewQueue(r).enqueue_review(REF)
        await asyncio.wait_for(dying.first_call.wait(), 20)
    # Its worker died mid-debate, as a killed one does: its job is left in progress.
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    await redis.psetex(in_progress(run), 60_000, b"1")
    await redis.aclose()
    await asyncio.sleep(1.1)  # its heartbeat lapses
    model = review.HeldModel(agreed())
    setup = worker_setup(github, key, model, heartbeat=1.0)
    comment = asked(github, ("stop", None), association="OWNER")
    async with background_worker(setup, redis_url) as redis:
        assert await resume_orphans(WorkerDeps.started(setup, redis), now=time.time()) == 1
        await asyncio.wait_for(model.first_call.wait(), 20)  # the resumed run debates

        await comment.enqueue(ReviewQueue(redis))
        await until_awaited(
            lambda: ended(redis, commands_job_id(REF, f"comment-{comment.comment_id}"))
        )
        model.release()
        await until_awaited(lambda: ended(redis, resume_job_id(run, 1)))

    assert github.reactions(REPO, comment.comment_id) == ["eyes", "rocket"]
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "cancelled")
    assert check.output["title"] == "Stopped by @octocat"
    assert github.reviews(REPO, NUMBER) == []


async def test_apply_commits_the_agreed_fix_to_the_head_branch(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_review(github, key, redis_url, agreed())

    await run_command(github, key, redis_url, ("apply", None))

    files = github.branch_files(REPO, "feature")
    assert files[PAYMENTS] == PAYMENTS_AFTER.replace("    log(payment.id, amount)", LOG_LINE)
    (update,) = github.ref_updates(REPO)
    assert not update.force
    commit = github.commit(REPO, update.after)
    assert list(commit.parents) == [REF.head_sha]
    assert "F1 (blocker) app/payments.py:16" in commit.message
    (reply,) = replies(github)
    assert reply.startswith(f"Committed {update.after[:7]} to ")


async def test_apply_after_a_push_refuses_and_writes_nothing(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_review(github, key, redis_url, agreed())
    github.add_pull(
        REPO, NUMBER, head_sha="c" * 40, base_sha="b" * 40, diff=DIFF, head_ref="feature"
    )

    await run_command(github, key, redis_url, ("apply", None))

    assert github.ref_updates(REPO) == []
    (reply,) = replies(github)
    assert "comment `/tiebreak review` first" in reply


FORCED = {
    "rulings": [
        {
            "finding_id": "F1",
            "ruling": "force_fix",
            "reasoning": "log is undefined.",
            "patch": {"path": PAYMENTS, "start_line": 16, "end_line": 16, "replacement": LOG_LINE},
        }
    ]
}


async def unresolved_review(github: FakeGitHub, key: AppKey, redis_url: str) -> None:
    github.set_file(REPO, "b" * 40, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "action_required")


async def test_an_unresolved_run_offers_its_buttons(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await unresolved_review(github, key, redis_url)

    (check,) = github.check_runs(REPO)
    assert [a["identifier"] for a in check.actions] == ["arbitrate", "accept"]


async def test_arbitrate_sends_the_open_findings_to_the_arbiter_and_lands_its_ruling(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await unresolved_review(github, key, redis_url)
    llm = ScriptedLLM(by_role(arbiter=[FORCED]))
    comment = asked(github, ("arbitrate", None), association="OWNER")

    await run_worker(github, key, redis_url, llm, comment.enqueue)

    _, ruling = github.reviews(REPO, NUMBER)
    (suggestion,) = ruling.comments
    assert f"```suggestion\n{LOG_LINE}\n```" in suggestion.body
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")
    assert github.issue_labels(REPO, NUMBER) == []
    assert github.reactions(REPO, comment.comment_id) == ["eyes", "rocket"]


async def test_arbitrate_after_a_push_shows_the_arbiter_each_findings_own_unit(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await rescoped_review(github, key, redis_url)

    def arbiter(request: LLMRequest) -> Reply:
        return rulings(*(warn(f, "Customers' text must never run.") for f in request.subject))

    llm = ScriptedLLM(by_role(arbiter=[arbiter, arbiter]))
    comment = asked(github, ("arbitrate", None), association="OWNER")

    await run_worker(github, key, redis_url, llm, comment.enqueue)

    # The pushed file's finding, debated again in the later run's `u1`, and the other file's,
    # carried in the first run's unit: each ruled on with the diff its debate read.
    assert sorted(sorted(shown(r)) for r in llm.requests) == [[CORE], [EXTRA]]
    assert github.issue_labels(REPO, NUMBER) == []
    assert github.reactions(REPO, comment.comment_id) == ["eyes", "rocket"]


async def test_arbitrate_in_a_review_thread_rules_on_that_finding_only(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await unresolved_review(github, key, redis_url)
    (tiebreaks,) = github.reviews(REPO, NUMBER)[0].comments
    reply = github.add_review_comment(
        REPO, NUMBER, PAYMENTS, 16, "@tiebreak arbitrate", in_reply_to=tiebreaks.id
    )
    request = CommandRequest(
        pull=REF,
        login="octocat",
        association="OWNER",
        comment=CommentRef(id=reply, kind="review", thread_id=tiebreaks.id),
        calls=[CommandCall(name="arbitrate")],
    )
    llm = ScriptedLLM(by_role(arbiter=[FORCED]))

    await run_worker(
        github, key, redis_url, llm, lambda queue: queue.enqueue_commands(request, "thread")
    )

    (call,) = llm.requests
    assert call.subject == ("F1",)
    assert github.reactions(REPO, reply) == ["eyes", "rocket"]


async def test_the_accept_button_resolves_without_a_comment(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await unresolved_review(github, key, redis_url)
    request = CommandRequest(pull=REF, login="octocat", calls=[CommandCall(name="resolve")])

    await run_worker(
        github,
        key,
        redis_url,
        ScriptedLLM(by_role()),
        lambda queue: queue.enqueue_commands(request, "button"),
    )

    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")
    assert github.issue_labels(REPO, NUMBER) == []


async def test_arbitrate_calls_no_model_once_the_daily_allowance_is_spent(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    settings = Settings(tiebreak_daily_token_cap=50_000)
    github.set_file(REPO, "b" * 40, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)), settings=settings)
    redis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        daily = DailyAllowance(redis, REF.installation_id, 50_000)
        assert await daily.reserve(await daily.remaining() - 5_000) is not None
    finally:
        await redis.aclose()
    llm = ScriptedLLM(by_role(arbiter=[FORCED]))
    comment = asked(github, ("arbitrate", None), association="OWNER")

    await run_worker(github, key, redis_url, llm, comment.enqueue, settings=settings)

    assert llm.requests == []
    (reply,) = replies(github)
    assert reply.startswith("This installation has spent its daily token allowance")
    assert github.reactions(REPO, comment.comment_id) == ["eyes", "confused"]


async def test_resolve_removes_the_label_the_config_names(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    config = "label: needs a human\ndebate:\n  arbitration: false\n"
    github.set_file(REPO, "b" * 40, ".github/tiebreak.yml", config)
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))
    assert github.issue_labels(REPO, NUMBER) == ["needs a human"]

    await run_command(github, key, redis_url, ("resolve", None))

    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")


async def test_arbitrate_racing_a_push_leaves_the_newer_review_as_it_is(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await unresolved_review(github, key, redis_url)
    newer = REF.model_copy(update={"head_sha": "9" * 40})
    ruling = asked(github, ("arbitrate", None), association="OWNER")
    model = HeldModel(
        ScriptedLLM(by_role(**STUBBORN)),
        ScriptedLLM(by_role(arbiter=[FORCED])),
        lambda request: request.role is Role.ARBITER,
    )
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        queue = ReviewQueue(redis)
        await ruling.enqueue(queue)
        await asyncio.wait_for(model.arrived.wait(), 30)
        github.add_pull(REPO, NUMBER, head_sha=newer.head_sha, base_sha=BASE, diff=DIFF)
        await queue.enqueue_review(newer)
        assert await finished(redis, review_job_id(newer)) == "action_required"
        shown, checks = summary(github), github.check_runs(REPO)
        model.released.set()
        await finished(redis, commands_job_id(REF, f"comment-{ruling.comment_id}"))
        record = await latest_run(redis)

    assert record.ref == newer
    assert [f.resolution for f in record.review.findings] == [Resolution.OPEN]
    assert summary(github) == shown
    assert [c.states for c in github.check_runs(REPO)] == [c.states for c in checks]
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    # No ruling was posted on the older head's review.
    assert [r.commit_id for r in github.reviews(REPO, NUMBER)] == [REF.head_sha]
    assert replies(github)[-1].startswith("Tiebreak reviewed 9999999 while the arbiter ruled")
    assert github.reactions(REPO, ruling.comment_id) == ["eyes", "confused"]

    # `apply` and `resolve` act on the newer review, the latest.
    await run_command(github, key, redis_url, ("apply", None), ("resolve", None))

    assert replies(github)[-1] == "The latest review has no agreed or forced fixes to apply."
    assert github.ref_updates(REPO) == []
    newest = next(c for c in github.check_runs(REPO) if c.head_sha == newer.head_sha)
    assert newest.states[-1] == ("completed", "success")
    assert newest.output["title"] == "Resolved by @octocat"
