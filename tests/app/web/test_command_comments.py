"""Comments carrying commands, from the webhook endpoint to a real worker: what GitHub receives."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.scripted import ScriptedLLM, by_role
from app.settings import Settings
from app.store.queue import ReviewQueue
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import STUBBORN, run_review, run_worker
from tests.scenarios.debates import PAYMENTS
from tests.scenarios.reviews import BASE, NUMBER, REPO
from tests.scenarios.webhooks import SECRET, payload, signed

MAINTAINER = "Codertocat"
"""The repository's owner in GitHub's example payloads."""


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def comment_on_the_pull(github: FakeGitHub, event: str, body: str) -> dict[str, Any]:
    """The maintainer writes `body` on the pull request (in its conversation or on a line of
    its diff); the delivery GitHub sends for it."""
    if event == "issue_comment":
        comment_id = github.add_issue_comment(REPO, NUMBER, body, author=MAINTAINER)
        delivery = payload("issue_comment/created.with-installation")
        delivery["issue"].update(number=NUMBER, pull_request={"url": "https://api.github.com/x"})
    else:
        comment_id = github.add_review_comment(REPO, NUMBER, PAYMENTS, 16, body, author=MAINTAINER)
        delivery = payload("pull_request_review_comment/created")
        delivery["pull_request"]["number"] = NUMBER
    delivery["comment"].update(id=comment_id, body=body, author_association="OWNER")
    delivery["comment"]["user"].update(login=MAINTAINER, type="User")
    delivery["sender"].update(login=MAINTAINER, type="User")
    return delivery


def deliver(client: TestClient, event: str, delivery: dict[str, Any]) -> Any:
    raw, headers = signed(event, delivery)
    return client.post("/api/github/webhooks", content=raw, headers=headers)


async def run_what_was_queued(github: FakeGitHub, key: AppKey, redis_url: str) -> None:
    async def nothing_more(queue: ReviewQueue) -> None:
        return None

    await run_worker(github, key, redis_url, ScriptedLLM(by_role()), nothing_more)


def tiebreaks_posts(github: FakeGitHub) -> list[str]:
    """Everything Tiebreak wrote on the pull request, in the conversation and in threads."""
    conversation = [c.body for c in github.issue_comments(REPO, NUMBER) if c.author_type == "Bot"]
    threads = [c.body for c in github.review_comments(REPO, NUMBER) if c.author_type == "Bot"]
    return conversation + threads


async def unresolved_review(github: FakeGitHub, key: AppKey, redis_url: str) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "action_required")
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]


async def test_a_maintainers_resolve_comment_resolves_the_check_run(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await unresolved_review(github, key, redis_url)
    delivery = comment_on_the_pull(github, "issue_comment", "Shipping it.\n/tiebreak resolve")

    assert deliver(client, "issue_comment", delivery).status_code == 202
    await run_what_was_queued(github, key, redis_url)

    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")
    assert github.issue_labels(REPO, NUMBER) == []


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0c"], ids=ascii)
async def test_command_after_unicode_line_separator_in_a_maintainers_quote_does_not_run(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str, separator: str
) -> None:
    await unresolved_review(github, key, redis_url)
    # A reader's comment, quoted by the maintainer: GitHub shows one quoted line.
    quoted = f"> This looks wrong to me.{separator}/tiebreak resolve\n\nLet's look again."
    delivery = comment_on_the_pull(github, "issue_comment", quoted)

    answer = deliver(client, "issue_comment", delivery)
    await run_what_was_queued(github, key, redis_url)

    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "action_required")
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    assert github.reactions(REPO, delivery["comment"]["id"]) == []
    assert answer.json()["outcome"] == "ignored"


def sixty_five_kb_of_distinct_command_lines() -> str:
    """GitHub's largest comment (65,536 characters): every command but `review` and `budget`,
    then one distinct command line after another."""
    lines = ["/tiebreak stop", "/tiebreak resolve", "/tiebreak apply", "/tiebreak arbitrate"]
    lines.append("/tiebreak help")
    size, i = sum(len(line) + 1 for line in lines), 0
    while size < 65_536:
        line = f"/tiebreak budget {10_000 + i}" if i % 2 else f"/tiebreak deploy {i}"
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)[:65_536]


@pytest.mark.parametrize("event", ["issue_comment", "pull_request_review_comment"])
async def test_huge_comment_of_commands_is_answered_and_runs_at_most_5(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str, event: str
) -> None:
    delivery = comment_on_the_pull(github, event, sixty_five_kb_of_distinct_command_lines())

    answer = deliver(client, event, delivery)
    await run_what_was_queued(github, key, redis_url)

    assert (answer.status_code, answer.json()["outcome"]) == (202, "enqueued")
    # The first five distinct commands ran, each answering once; nothing after them did.
    posts = tiebreaks_posts(github)
    assert posts[0] == "No review of this pull request is running."
    assert posts[1:4] == ["Tiebreak has not reviewed this pull request yet."] * 3
    assert posts[4].startswith("Tiebreak's commands")
    assert len(posts) == 5
    assert github.reactions(REPO, delivery["comment"]["id"]) == ["eyes", "confused"]
    writes = [r for r in github.requests if r.method != "GET" and "access_tokens" not in r.path]
    assert len(writes) == 5 + 2  # the replies and the two reactions
