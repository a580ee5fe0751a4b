"""`workflow_run` deliveries: only a completed run titled with a Tiebreak run token queues a
look at its result, once however often GitHub delivers it."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web.server import create_app
from tests.scenarios.webhooks import SECRET, signed

TOKEN = "ab" * 16


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def delivery(action: str, title: str, run_id: int = 5) -> dict[str, Any]:
    return {
        "action": action,
        "workflow_run": {"id": run_id, "display_title": title, "status": action},
        "repository": {"id": 77, "name": "shop", "owner": {"login": "octo"}},
        "installation": {"id": 9},
    }


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
