"""`/tiebreak learnings`, `/tiebreak forget N` and `/tiebreak resolve <reason>` on a real worker
against the fake GitHub: who may run them, and what the repository's learnings become; the
learnings an older Tiebreak kept under the repository's name, taken up when GitHub shows one
of their threads in it."""

from datetime import UTC, datetime

import pytest
from arq.connections import RedisSettings, create_pool

from agents.models.scripted import ScriptedLLM, by_role
from app.store import keys
from app.store.learnings import LearningStore, Repository
from app.store.redis_typing import reply
from policies.learnings import Learning, LearningSource
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.hearing import tiebreaks_replies, unresolved_review
from tests.kits.review import asked, resolved_in_thread, run_worker, summaries
from tests.scenarios.reviews import NUMBER, REPO, REPO_ID

RULE = "Amounts are integers in cents; do not flag integer division on them."


def taught(rule: str = RULE) -> Learning:
    return Learning(
        rule=rule,
        paths=("billing/**",),
        source=LearningSource.WITHDRAWN,
        taught_by="octocat",
        taught_at=datetime(2025, 3, 1, tzinfo=UTC),
        thread_url=f"https://github.com/{REPO}/pull/1#discussion_r7",
    )


async def keep(redis_url: str, *learnings: Learning) -> list[Learning]:
    """Keep `learnings` for the repository; then all it keeps, most recent first."""
    redis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        store = LearningStore(redis)
        for learning in learnings:
            await store.record(Repository(REPO_ID, REPO), learning)
        return await store.all(REPO_ID)
    finally:
        await redis.aclose()


async def keep_under_name(redis_url: str, number: int, thread: int) -> None:
    """Learning `number` as an older Tiebreak kept it, under the repository's name, taught in
    the thread starting with comment `thread`."""
    learning = taught().model_copy(
        update={"thread_url": f"https://github.com/{REPO}/pull/{NUMBER}#discussion_r{thread}"}
    )
    redis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        body = learning.model_dump_json(exclude={"number"})
        await reply(redis.hset(keys.named_learnings(REPO), str(number), body))
        await redis.set(keys.named_learnings_counter(REPO), str(number))
    finally:
        await redis.aclose()


async def kept_under_name(redis_url: str) -> list[Learning]:
    redis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        return await LearningStore(redis).named(REPO)
    finally:
        await redis.aclose()


def replies(github: FakeGitHub) -> list[str]:
    kept = {c.id for c in summaries(github)}
    return [
        c.body
        for c in github.issue_comments(REPO, NUMBER)
        if c.author_type == "Bot" and c.id not in kept
    ]


@pytest.mark.parametrize(
    ("command", "role", "runs"),
    [
        (("learnings", None), "read", False),
        (("learnings", None), "triage", False),
        (("learnings", None), "write", True),
        (("learnings", None), "admin", True),
        (("forget", 1), "read", False),
        (("forget", 1), "triage", False),
        (("forget", 1), "write", True),
        (("forget", 1), "maintain", True),
    ],
    ids=[
        "learnings-reader",
        "learnings-triager",
        "learnings-writer",
        "learnings-admin",
        "forget-reader",
        "forget-triager",
        "forget-writer",
        "forget-maintainer",
    ],
)
async def test_who_may_list_and_forget_learnings(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    command: tuple[str, int | None],
    role: str,
    runs: bool,
) -> None:
    await keep(redis_url, taught())
    github.set_permission(REPO, "octocat", role)
    comment = asked(github, command)

    await run_worker(github, key, redis_url, ScriptedLLM(by_role()), comment.enqueue)

    (reply,) = replies(github)
    if runs:
        assert "only people with write access" not in reply
        assert github.reactions(REPO, comment.comment_id) == ["eyes", "rocket"]
    else:
        assert "only people with write access" in reply
        assert [item.number for item in await keep(redis_url)] == [1]


async def test_learnings_lists_number_rule_files_who_when_and_thread(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await keep(redis_url, taught(), taught("Prefer *pathlib* <b>here</b>."))
    github.set_permission(REPO, "octocat", "write")

    await run_worker(
        github, key, redis_url, ScriptedLLM(by_role()), asked(github, ("learnings", None)).enqueue
    )

    (reply,) = replies(github)
    rows = [line for line in reply.splitlines() if line.startswith("| ")][1:]
    assert rows[0].startswith("| 2 | Prefer *pathlib* &lt;b>here&lt;/b>. |")
    assert rows[1] == (
        f"| 1 | {RULE} | <code>billing/&#42;&#42;</code> | <code>octocat</code> | 2025-03-01 | "
        f"[thread](https://github.com/{REPO}/pull/1#discussion_r7) |"
    )


async def test_a_long_list_of_learnings_is_cut_with_a_count(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await keep(redis_url, *(taught(f"Rule {n}.") for n in range(1, 36)))
    github.set_permission(REPO, "octocat", "write")

    await run_worker(
        github, key, redis_url, ScriptedLLM(by_role()), asked(github, ("learnings", None)).enqueue
    )

    (reply,) = replies(github)
    assert "most recent first (35)" in reply
    assert "| 35 | Rule 35. |" in reply
    assert "| 5 | Rule 5. |" not in reply
    assert "…and 5 older ones." in reply


async def test_forget_removes_one_learning_and_its_number_is_not_reused(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await keep(redis_url, taught("One."), taught("Two."))
    github.set_permission(REPO, "octocat", "write")

    await run_worker(
        github, key, redis_url, ScriptedLLM(by_role()), asked(github, ("forget", 1)).enqueue
    )
    await run_worker(
        github, key, redis_url, ScriptedLLM(by_role()), asked(github, ("forget", 9)).enqueue
    )

    assert replies(github) == [
        "Forgot learning #1: later reviews no longer read it.",
        "This repository has no learning #9 (`/tiebreak learnings` lists them).",
    ]
    kept = await keep(redis_url, taught("Three."))
    assert [(item.number, item.rule) for item in kept] == [(3, "Three."), (2, "Two.")]


@pytest.mark.parametrize(
    ("reason", "learned"),
    [
        ("Integer division is intended here: amounts are cents.", True),
        ("One. Two. Three sentences are too many.", False),
        ("", False),
    ],
    ids=["a-rule", "not-one-rule", "no-reason"],
)
async def test_resolve_with_a_reason_in_a_findings_thread_teaches_it(
    github: FakeGitHub, key: AppKey, redis_url: str, reason: str, learned: bool
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    github.set_permission(REPO, "maintainer", "write")

    await resolved_in_thread(github, key, redis_url, thread, reason)

    assert github.issue_labels(REPO, NUMBER) == []
    kept = await keep(redis_url)
    answers = [c.body for c in tiebreaks_replies(github, thread)]
    if learned:
        (learning,) = kept
        assert (learning.rule, learning.paths) == (reason, ("app/**",))
        assert (learning.source, learning.taught_by) == (LearningSource.RESOLVED, "maintainer")
        assert learning.thread_url.endswith(f"#discussion_r{thread}")
        (answer,) = answers
        assert answer.startswith("Resolved.\n\nLearned #1")
    else:
        assert kept == []
        assert answers == ([] if not reason else [answers[0]])
        assert not reason or "was not kept as a learning" in answers[0]


async def test_learnings_kept_under_the_name_are_the_repositorys_once_github_shows_a_thread(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    await keep_under_name(redis_url, 7, thread)
    github.set_permission(REPO, "octocat", "write")

    await run_worker(
        github, key, redis_url, ScriptedLLM(by_role()), asked(github, ("learnings", None)).enqueue
    )

    (listing,) = replies(github)
    assert "most recent first (1)" in listing
    assert f"| 7 | {RULE} |" in listing
    assert await kept_under_name(redis_url) == []
    kept = await keep(redis_url, taught("Eight."))
    assert [(item.number, item.rule) for item in kept] == [(8, "Eight."), (7, RULE)]


async def test_learnings_kept_under_the_name_of_another_repository_are_left_alone(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    # Their thread was a comment of the repository deleted before this one took its name.
    await keep_under_name(redis_url, 7, 424_242)
    github.set_permission(REPO, "octocat", "write")

    for command in (("learnings", None), ("forget", 7)):
        await run_worker(
            github, key, redis_url, ScriptedLLM(by_role()), asked(github, command).enqueue
        )

    assert replies(github) == [
        "This repository has taught Tiebreak nothing yet.",
        "This repository has no learning #7 (`/tiebreak learnings` lists them).",
    ]
    asked_for = github.requests_to("GET", rf"/repos/{REPO}/pulls/comments/424242")
    assert [r.status for r in asked_for] == [404, 404]
    assert [item.number for item in await kept_under_name(redis_url)] == [7]
    assert await keep(redis_url) == []


async def test_a_pull_requests_own_learning_is_listed_and_forgotten_on_it(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    own = taught("Prefer pathlib.").model_copy(update={"pull": NUMBER})
    await keep(redis_url, taught(), own)
    github.set_permission(REPO, "octocat", "write")

    await run_worker(
        github, key, redis_url, ScriptedLLM(by_role()), asked(github, ("learnings", None)).enqueue
    )
    await run_worker(
        github, key, redis_url, ScriptedLLM(by_role()), asked(github, ("forget", 2)).enqueue
    )

    listing, forgot = replies(github)
    repository, pull = listing.split("This pull request's own (1)")
    assert f"| 1 | {RULE} |" in repository
    assert "| 2 | Prefer pathlib. |" in pull
    assert "may not write to this repository: its reviews alone read them" in pull
    assert forgot == "Forgot learning #2: later reviews no longer read it."
    assert [item.number for item in await keep(redis_url)] == [1]
