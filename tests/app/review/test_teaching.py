"""A writer's 👎 on a finding teaches Tiebreak, read when it next reviews the pull request
(GitHub sends no webhook for a reaction); a reader's or a bot's teaches nothing, and a 👎 teaches
once however many reviews see it."""

import pytest
from arq.connections import RedisSettings, create_pool

from agents.models.scripted import ScriptedLLM, by_role
from app.store.learnings import LearningStore
from policies.learnings import Learning, LearningSource
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.hearing import NO_ARBITER, tiebreaks_replies, unresolved_review
from tests.kits.review import STUBBORN, run_review
from tests.scenarios.reviews import BASE, NUMBER, REPO, REPO_ID

CLAIM = "`log` is not defined anywhere"


async def learned(redis_url: str) -> list[Learning]:
    redis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        return await LearningStore(redis).all(REPO_ID)
    finally:
        await redis.aclose()


async def review_again(github: FakeGitHub, key: AppKey, redis_url: str, rerun: str) -> None:
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)), rerun=rerun)


@pytest.mark.parametrize(
    ("login", "kind", "role", "taught"),
    [
        ("maintainer", "User", "write", True),
        ("admin-person", "User", "admin", True),
        ("mallory", "User", "read", False),
        ("stranger", "User", "none", False),
        ("ci-helper[bot]", "Bot", "write", False),
    ],
    ids=["a-writer", "an-admin", "a-reader", "a-stranger", "a-bot"],
)
async def test_a_thumbs_down_teaches_only_from_a_writer_at_the_next_review(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    login: str,
    kind: str,
    role: str,
    taught: bool,
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    github.set_permission(REPO, login, role)
    github.add_reaction(REPO, thread, "-1", user=login, user_type=kind)
    assert await learned(redis_url) == []  # no webhook: nothing until Tiebreak reads it

    await review_again(github, key, redis_url, "again")

    if not taught:
        assert await learned(redis_url) == []
        assert tiebreaks_replies(github, thread) == []
        return
    (learning,) = await learned(redis_url)
    assert (learning.number, learning.source, learning.taught_by) == (
        1,
        LearningSource.THUMBS_DOWN,
        login,
    )
    assert learning.paths == ("app/**",)
    assert CLAIM in learning.rule
    assert learning.rule.startswith("A writer refused this finding")
    assert learning.thread_url.endswith(f"/pull/{NUMBER}#discussion_r{thread}")
    (reply,) = tiebreaks_replies(github, thread)
    assert "refused this finding with 👎" in reply.body
    assert "Learned #1" in reply.body


async def test_a_thumbs_down_teaches_once_however_many_reviews_see_it(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    github.set_permission(REPO, "maintainer", "write")
    github.add_reaction(REPO, thread, "-1", user="maintainer")

    await review_again(github, key, redis_url, "again")
    await review_again(github, key, redis_url, "and-again")

    assert [item.number for item in await learned(redis_url)] == [1]
    assert len(tiebreaks_replies(github, thread)) == 1


async def test_a_thumbs_down_teaches_nothing_when_learning_is_off(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "learnings: {enabled: false}\n")
    github.set_permission(REPO, "maintainer", "write")
    github.add_reaction(REPO, thread, "-1", user="maintainer")

    await review_again(github, key, redis_url, "again")

    assert await learned(redis_url) == []
    assert tiebreaks_replies(github, thread) == []


async def test_a_thumbs_down_teaches_nothing_once_the_config_turns_learning_off(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    github.set_permission(REPO, "maintainer", "write")
    github.add_reaction(REPO, thread, "-1", user="maintainer")
    github.set_file(
        REPO, BASE, ".github/tiebreak.yml", NO_ARBITER + "learnings: {enabled: false}\n"
    )

    await review_again(github, key, redis_url, "again")

    assert await learned(redis_url) == []
    assert tiebreaks_replies(github, thread) == []
