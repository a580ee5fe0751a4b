"""Comments and check-run buttons at the webhook: who and what gets queued."""

import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.events import CommandRequest
from app.settings import Settings
from app.web.server import create_app
from tests.kits.store import Store
from tests.scenarios.webhooks import SECRET, payload, signed


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


@pytest.fixture
def store(redis_url: str) -> Iterator[Store]:
    view = Store(redis_url)
    yield view
    view.close()


def post(client: TestClient, event: str, body: dict[str, Any]) -> Any:
    raw, headers = signed(event, body)
    return client.post("/api/github/webhooks", content=raw, headers=headers)


def conversation_comment(body: str, *, user_type: str = "User", on_pull: bool = True) -> Any:
    delivery = payload("issue_comment/created.with-installation")
    delivery["comment"]["body"] = body
    delivery["comment"]["user"]["type"] = delivery["sender"]["type"] = user_type
    delivery["issue"]["pull_request"] = {"url": "https://api.github.com/x"} if on_pull else None
    return delivery


def queued_requests(store: Store) -> list[CommandRequest]:
    requests = []
    for job_id in store.queued_jobs():
        job = pickle.loads(store.raw(f"arq:job:{job_id}") or b"")
        if job["f"] == "run_commands":
            requests.append(CommandRequest.model_validate(job["a"][0]))
    return requests


def test_a_command_on_a_pull_request_is_queued_with_who_asked(
    client: TestClient, store: Store
) -> None:
    response = post(client, "issue_comment", conversation_comment("/tiebreak budget 50000"))

    assert response.status_code == 202
    (request,) = queued_requests(store)
    assert (request.login, request.association) == ("Codertocat", "OWNER")
    assert [(c.name, c.argument) for c in request.calls] == [("budget", 50_000)]
    assert request.comment is not None
    assert request.comment.kind == "issue"


@pytest.mark.parametrize(
    "delivery",
    [
        conversation_comment("/tiebreak review", user_type="Bot"),
        conversation_comment("/tiebreak review", on_pull=False),
        conversation_comment("Thanks, looks good."),
        conversation_comment("> /tiebreak apply"),
    ],
    ids=["bot", "issue-not-pull", "no-command", "quoted"],
)
def test_comments_that_run_nothing(client: TestClient, store: Store, delivery: Any) -> None:
    response = post(client, "issue_comment", delivery)

    assert response.status_code == 200
    assert response.json()["outcome"] == "ignored"
    assert queued_requests(store) == []


def test_tiebreaks_own_comment_never_triggers_it(client: TestClient, store: Store) -> None:
    delivery = conversation_comment("Tiebreak's commands:\n/tiebreak review")
    delivery["comment"]["user"]["login"] = delivery["sender"]["login"] = "tiebreak[bot]"
    delivery["comment"]["user"]["type"] = delivery["sender"]["type"] = "Bot"

    assert post(client, "issue_comment", delivery).json()["outcome"] == "ignored"
    assert queued_requests(store) == []


def test_a_reply_in_a_review_thread_answers_in_that_thread(
    client: TestClient, store: Store
) -> None:
    delivery = payload("pull_request_review_comment/created")
    delivery["comment"]["body"] = "@tiebreak arbitrate"
    delivery["comment"]["in_reply_to_id"] = 1234

    assert post(client, "pull_request_review_comment", delivery).status_code == 202

    (request,) = queued_requests(store)
    assert request.comment is not None
    assert (request.comment.kind, request.comment.thread_id) == ("review", 1234)
    assert [c.name for c in request.calls] == ["arbitrate"]


def test_the_same_comment_delivered_twice_runs_once(client: TestClient, store: Store) -> None:
    delivery = conversation_comment("/tiebreak review")

    post(client, "issue_comment", delivery)
    again = post(client, "issue_comment", delivery)

    assert again.json()["outcome"] == "duplicate"
    assert len(queued_requests(store)) == 1


@pytest.mark.parametrize(
    ("identifier", "command"), [("accept", "resolve"), ("arbitrate", "arbitrate")]
)
def test_check_run_buttons_queue_their_command(
    client: TestClient, store: Store, identifier: str, command: str
) -> None:
    delivery = payload("check_run/requested_action")
    delivery["requested_action"]["identifier"] = identifier

    assert post(client, "check_run", delivery).status_code == 202

    (request,) = queued_requests(store)
    assert request.comment is None
    assert [c.name for c in request.calls] == [command]
    assert request.pull.number == 26764


def test_an_unknown_button_is_ignored(client: TestClient, store: Store) -> None:
    response = post(client, "check_run", payload("check_run/requested_action"))

    assert response.json()["outcome"] == "ignored"
    assert store.queued_jobs() == []


def test_re_running_the_check_suite_reviews_its_head_again(
    client: TestClient, store: Store
) -> None:
    delivery = payload("check_suite/rerequested")

    assert post(client, "check_suite", delivery).status_code == 202

    (job,) = store.queued_jobs()
    head = delivery["check_suite"]["head_sha"]
    assert job.startswith(f"review:Codertocat/Hello-World#2@{head}:")
