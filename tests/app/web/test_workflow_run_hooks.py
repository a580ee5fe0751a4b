"""`workflow_run` deliveries: only a completed run titled with a Tiebreak run token queues a
look at its result, once per run however often GitHub delivers it: a run titled alike (a
decoy) does not make the next run's delivery a duplicate."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web.server import create_app
from tests.scenarios.webhooks import SECRET, payload, signed

TOKEN = "ab" * 16


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def delivery(action: str, title: str, run_id: int = 5) -> dict[str, Any]:
    """GitHub's example of a completed run, as the App receives it, at `action`."""
    body = payload("workflow_run/completed")
    body["action"] = action
    body["workflow_run"].update(
        id=run_id,
        display_title=title,
        status=action,
        conclusion="success" if action == "completed" else None,
    )
    body["repository"].update(
        id=77, name="shop", owner={**body["repository"]["owner"], "login": "octo"}
    )
    body["installation"] = {"id": 9}
    return body


def outcome(client: TestClient, body: dict[str, Any]) -> str:
    raw, headers = signed("workflow_run", body)
    answer = client.post("/api/github/webhooks", content=raw, headers=headers)
    said: str = answer.json()["outcome"]
    return said


@pytest.mark.parametrize(
    ("action", "title", "said"),
    [
        ("completed", f"Tiebreak {TOKEN}", "enqueued"),
        ("completed", "CI", "ignored"),
        ("completed", f"Tiebreak {TOKEN} and more", "ignored"),
        ("in_progress", f"Tiebreak {TOKEN}", "ignored"),
    ],
)
def test_only_a_completed_run_of_tiebreaks_is_taken(
    client: TestClient, action: str, title: str, said: str
) -> None:
    assert outcome(client, delivery(action, title)) == said


def test_a_run_delivered_again_is_taken_once(client: TestClient) -> None:
    assert outcome(client, delivery("completed", f"Tiebreak {TOKEN}")) == "enqueued"
    assert outcome(client, delivery("completed", f"Tiebreak {TOKEN}")) == "duplicate"


def test_runs_titled_with_one_token_are_each_taken_once(client: TestClient) -> None:
    title = f"Tiebreak {TOKEN}"

    assert outcome(client, delivery("completed", title, run_id=5)) == "enqueued"
    assert outcome(client, delivery("completed", title, run_id=6)) == "enqueued"
    assert outcome(client, delivery("completed", title, run_id=6)) == "duplicate"
