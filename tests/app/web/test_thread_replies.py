"""People's replies on Tiebreak's finding threads, from the webhook endpoint to a real worker:
what GitHub receives, and what the tester and the arbiter read."""

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.llm import LLMRequest, Role
from agents.scripted import Reply, ScriptedLLM, by_role
from app.settings import Settings
from app.web.server import create_app
from tests.app.reply_kit import (
    AUTHOR,
    CONVINCING,
    REASON,
    UNCONVINCING,
    hearing_model,
    reply_on,
    run_queued,
    tiebreaks_replies,
    unresolved_review,
)
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.scenarios.debates import accept, evaluations, reject, rulings, warn
from tests.scenarios.reviews import NUMBER, REPO
from tests.scenarios.webhooks import SECRET, signed


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def deliver(client: TestClient, delivery: dict[str, Any], event: str = "") -> str:
    raw, headers = signed(event or "pull_request_review_comment", delivery)
    answer = client.post("/api/github/webhooks", content=raw, headers=headers)
    assert answer.status_code in (200, 202)
    outcome: str = answer.json()["outcome"]
    return outcome


def untrusted(request: LLMRequest, kind: str) -> str:
    """The content of the request's `<untrusted-kind-…>` block."""
    text = "\n".join(block.text for block in request.blocks)
    found = re.search(rf"<(untrusted-{kind}-[0-9a-f]+)>\n(.*)\n</\1>", text, re.DOTALL)
    assert found is not None, f"no {kind} block in the request"
    return found[2]


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


def _disputes(request: LLMRequest) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(untrusted(request, "disputes"))
    disputes: list[dict[str, Any]] = data["disputes"]
    return disputes


@pytest.mark.parametrize(
    ("login", "kind", "outcome"),
    [("mallory", "User", "enqueued"), ("ci-helper[bot]", "Bot", "ignored")],
    ids=["a reader", "a bot"],
)
async def test_a_readers_reply_and_a_bots_get_nothing(
    client: TestClient,
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    login: str,
    kind: str,
    outcome: str,
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    github.set_permission(REPO, "mallory", "read")
    llm = hearing_model(evaluations(reject("F1", REASON)))
    before = len(github.requests)

    assert deliver(client, reply_on(github, thread, CONVINCING, login=login, kind=kind)) == outcome
    await run_queued(github, key, redis_url, llm)
    writes = [r.path for r in github.requests[before:] if r.method != "GET"]
    # The author's reply after it is heard, and it alone.
    assert deliver(client, reply_on(github, thread, UNCONVINCING)) == "enqueued"
    await run_queued(github, key, redis_url, llm)

    assert [p for p in writes if "access_tokens" not in p and p != "/graphql"] == []
    (heard,) = llm.calls(Role.TESTER)
    assert CONVINCING not in untrusted(heard, "reply")
    (answer,) = tiebreaks_replies(github, thread)
    assert answer.body.startswith("F1 stands")
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]


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


async def test_a_redelivered_reply_is_heard_once(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    delivery = reply_on(github, thread, UNCONVINCING)
    llm = hearing_model(evaluations(reject("F1", REASON)))

    assert deliver(client, delivery) == "enqueued"
    await run_queued(github, key, redis_url, llm)
    # GitHub delivers it again (a new delivery id), and the person edits it.
    again = deliver(client, delivery)
    edited = deliver(client, delivery | {"action": "edited"})
    await run_queued(github, key, redis_url, llm)

    assert (again, edited) == ("duplicate", "ignored")
    assert len(llm.calls(Role.TESTER)) == 1
    assert len(tiebreaks_replies(github, thread)) == 1


@pytest.mark.parametrize(
    "body",
    ["```suggestion\n    log.info('refund %s', amount)\n```", "Fixed in 1a2b3c4, thanks."],
    ids=["a suggestion", "fixed in a commit"],
)
async def test_a_reply_that_brings_a_fix_is_left_to_the_next_review(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str, body: str
) -> None:
    thread = await unresolved_review(github, key, redis_url, "")
    llm = hearing_model(evaluations(reject("F1", REASON)))

    assert deliver(client, reply_on(github, thread, body)) == "ignored"
    await run_queued(github, key, redis_url, llm)
    # An argument after it is heard, and it alone.
    assert deliver(client, reply_on(github, thread, UNCONVINCING)) == "enqueued"
    await run_queued(github, key, redis_url, llm)

    (heard,) = llm.calls(Role.TESTER)
    assert UNCONVINCING in untrusted(heard, "reply")
    (answer,) = tiebreaks_replies(github, thread)
    assert answer.body.startswith("F1 stands")
