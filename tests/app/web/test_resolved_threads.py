"""Whose resolving of a finding's thread dismisses the finding, end to end: webhooks at the
endpoint, real workers, the fake GitHub and a scripted model. GitHub lets a pull request's
author resolve its conversations without write access, so a resolved thread dismisses its
finding only when a person who may write resolved it, or Tiebreak itself; a thread anyone else
resolved is reopened while its finding stands, and its thread says why, once."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM
from app.settings import Settings
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.dismissal import (
    asked_permission,
    conclusion,
    opened,
    push,
    stubborn,
    two_open_threads,
)
from tests.kits.hearing import (
    AUTHOR,
    CONVINCING,
    NO_ARBITER,
    deliver,
    is_hearing,
    reply_on,
    run_queued,
    tiebreaks_replies,
)
from tests.kits.review import summary
from tests.scenarios.debates import PAYMENTS_AFTER, accept, evaluations
from tests.scenarios.reviews import BASE, HEAD, NUMBER, REPO
from tests.scenarios.webhooks import SECRET

REOPENED = "Reopened: only someone with write access to this repository"


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


async def test_only_a_writer_resolving_a_thread_dismisses_its_finding(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    undefined, negative = await two_open_threads(client, github, key, redis_url)
    model = ScriptedLLM(stubborn)

    # The author, who may not write here, resolves both threads and pushes an unrelated file.
    for thread in (undefined, negative):
        github.resolve_thread(REPO, NUMBER, thread, by=AUTHOR)
    second = "1" * 40
    assert deliver(client, push(github, HEAD, second, "NOTE = 1\n"), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, model)

    assert conclusion(github, second) == "action_required"
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    assert summary(github).count("| unresolved |") == 2
    assert "not raised again" not in summary(github)
    # Both findings are in view again, and their threads say why, once.
    for thread in (undefined, negative):
        assert not github.thread_resolved(REPO, NUMBER, thread)
        (reopened,) = tiebreaks_replies(github, thread)
        assert reopened.body.startswith(REOPENED)
    # Two threads resolved by one person: GitHub is asked once what that person may do.
    assert asked_permission(github, AUTHOR) == 1

    # A writer resolves the first; the author resolves the second again.
    github.resolve_thread(REPO, NUMBER, undefined, by="maintainer")
    github.resolve_thread(REPO, NUMBER, negative, by=AUTHOR)
    third = "2" * 40
    assert deliver(client, push(github, second, third, "NOTE = 2\n"), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, model)

    assert conclusion(github, third) == "action_required"  # NEGATIVE still stands
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    assert summary(github).count("| unresolved |") == 1
    assert "1 finding not raised again" in summary(github)
    assert github.thread_resolved(REPO, NUMBER, undefined)  # the writer's stands
    assert not github.thread_resolved(REPO, NUMBER, negative)
    assert (
        len(tiebreaks_replies(github, undefined)) == len(tiebreaks_replies(github, negative)) == 1
    )
    assert asked_permission(github, "maintainer") == 1

    # Once a writer resolves the last one too, nothing stands in the way.
    github.resolve_thread(REPO, NUMBER, negative, by="maintainer")
    fourth = "3" * 40
    assert deliver(client, push(github, third, fourth, "NOTE = 3\n"), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, model)

    assert conclusion(github, fourth) == "success"
    assert github.issue_labels(REPO, NUMBER) == []
    assert github.thread_resolved(REPO, NUMBER, negative)


def convinced(request: LLMRequest) -> dict[str, Any]:
    """The reviewers of `stubborn`, whose tester accepts any reply it weighs and learns from
    it (for this pull request alone: its author may not write)."""
    if is_hearing(request):
        accepted = accept(request.subject[0], "Right, log is injected.")
        return evaluations(accepted | {"learning": "Here log is injected by the caller."})
    return stubborn(request)


@pytest.mark.parametrize("resolved_first", [False, True], ids=["open", "resolved by the author"])
async def test_a_thread_tiebreak_resolved_on_a_reply_stays_resolved_and_dismisses_its_finding(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str, resolved_first: bool
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", NO_ARBITER)
    github.set_permission(REPO, AUTHOR, "none")
    model = ScriptedLLM(convinced)
    assert deliver(client, opened(), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, model)
    comments = github.reviews(REPO, NUMBER)[0].comments
    (undefined,) = [c.id for c in comments if "is not defined anywhere" in c.body]
    if resolved_first:
        github.resolve_thread(REPO, NUMBER, undefined, by=AUTHOR)

    # The author's reply convinces the tester: Tiebreak withdraws the finding and resolves
    # its thread itself (GitHub names no user for its App's bot user as the resolver).
    assert deliver(client, reply_on(github, undefined, CONVINCING)) == "enqueued"
    await run_queued(github, key, redis_url, model)
    assert github.thread_resolved(REPO, NUMBER, undefined)
    (withdrawn,) = tiebreaks_replies(github, undefined)
    assert withdrawn.body.startswith("Withdrawn")
    assert "Learned for this pull request alone" in withdrawn.body

    # A push changes the payments file after the findings' lines: the tester raises both again.
    second = "1" * 40
    changed = PAYMENTS_AFTER + "\n\ndef noop():\n    return None\n"
    delivery = push(github, HEAD, second, "NOTE = 1\n", payments=changed)
    assert deliver(client, delivery, "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, model)

    assert github.thread_resolved(REPO, NUMBER, undefined)
    assert tiebreaks_replies(github, undefined) == [withdrawn]  # nothing reopened, nothing said
    assert "1 finding not raised again" in summary(github)
    assert summary(github).count("| unresolved |") == 1  # NEGATIVE
    assert conclusion(github, second) == "action_required"
