"""Whose 👎 dismisses a finding, end to end: webhooks at the endpoint, real workers, the fake
GitHub and a scripted model. GitHub sends no webhook for a reaction: Tiebreak reads the 👎s on
its findings when it next reviews the pull request. Anyone may react on a public repository,
so only a writer's 👎 dismisses a finding and teaches; the author's, a reader's or a
stranger's is not counted, whoever reacted before the writer."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from agents.models.scripted import ScriptedLLM
from app.settings import Settings
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.dismissal import (
    asked_permission,
    conclusion,
    push,
    stubborn,
    two_open_threads,
)
from tests.kits.hearing import AUTHOR, deliver, run_queued, tiebreaks_replies
from tests.kits.review import summary
from tests.scenarios.reviews import HEAD, NUMBER, REPO
from tests.scenarios.webhooks import SECRET


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


async def test_only_a_writers_thumbs_down_dismisses_a_finding_and_teaches(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    undefined, negative = await two_open_threads(client, github, key, redis_url)
    model = ScriptedLLM(stubborn)

    # The author, who may not write here, marks both findings 👎 and pushes an unrelated file.
    for thread in (undefined, negative):
        github.add_reaction(REPO, thread, "-1", user=AUTHOR)
    second = "1" * 40
    assert deliver(client, push(github, HEAD, second, "NOTE = 1\n"), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, model)

    assert conclusion(github, second) == "action_required"
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    assert summary(github).count("| unresolved |") == 2
    assert "not raised again" not in summary(github)
    assert tiebreaks_replies(github, undefined) == tiebreaks_replies(github, negative) == []
    # Two 👎s by one person: GitHub is asked once what that person may do.
    assert asked_permission(github, AUTHOR) == 1

    # A writer's 👎 on the finding the author already marked dismisses it, and teaches.
    github.add_reaction(REPO, undefined, "-1", user="maintainer")
    third = "2" * 40
    assert deliver(client, push(github, second, third, "NOTE = 2\n"), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, model)

    assert conclusion(github, third) == "action_required"  # NEGATIVE still stands
    assert summary(github).count("| unresolved |") == 1
    assert "1 finding not raised again" in summary(github)
    (taught,) = tiebreaks_replies(github, undefined)
    assert taught.body.startswith("<code>&#64;maintainer</code> refused this finding with 👎.")
    assert "Learned #1 for <code>app/&#42;&#42;</code>" in taught.body

    # Once a writer marks the last one too, nothing stands in the way.
    github.add_reaction(REPO, negative, "-1", user="maintainer")
    fourth = "3" * 40
    assert deliver(client, push(github, third, fourth, "NOTE = 3\n"), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, model)

    assert conclusion(github, fourth) == "success"
    assert github.issue_labels(REPO, NUMBER) == []
    assert asked_permission(github, "maintainer") == 2  # once per review that read its 👎s
