"""People's replies on Tiebreak's finding threads at the webhook endpoint, then on a real
worker: which replies are queued to be heard — not a bot's, not a redelivery or an edit, not
one that brings a fix — and which reach the tester. What the hearing job makes of a reply is
tested in `tests/app/jobs/test_hearing.py`."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from agents.models.llm import Role
from app.settings import Settings
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.hearing import (
    CONVINCING,
    REASON,
    UNCONVINCING,
    deliver,
    hearing_model,
    reply_on,
    run_queued,
    tiebreaks_replies,
    unresolved_review,
    untrusted,
)
from tests.scenarios.debates import evaluations, reject
from tests.scenarios.reviews import NUMBER, REPO
from tests.scenarios.webhooks import SECRET


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


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
