"""The check run's buttons and "Re-run" on a pull request from a fork, end to end: GitHub's
`check_run` delivery names no pull request then (`pull_requests: []`), so Tiebreak reads it
from the check run's `external_id`, which it set itself, once the delivery's repository and
head confirm it. GitHub's own examples of the deliveries, adapted to the fork's pull request,
go to the real endpoint; a real worker runs what they queue against the fake GitHub."""

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.scripted import ScriptedLLM, by_role
from app.settings import Settings
from app.web.server import create_app
from tests.fakes.github_api import AppKey, CheckRun, FakeGitHub
from tests.kits.review import STUBBORN, agreed, run_review, run_worker
from tests.kits.store import Store
from tests.scenarios.debates import PAYMENTS, PAYMENTS_AFTER, PAYMENTS_BEFORE
from tests.scenarios.reviews import BASE, DIFF, INSTALLATION, REF, REPO
from tests.scenarios.webhooks import SECRET, payload, signed

FORK = REF.model_copy(update={"number": 3, "head_sha": "f" * 40})
"""The pull request from `stranger/Hello-World`."""


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


@pytest.fixture
def store(redis_url: str) -> Iterator[Store]:
    view = Store(redis_url)
    yield view
    view.close()


@pytest.fixture
def fork(github: FakeGitHub) -> FakeGitHub:
    """The fake GitHub with the pull request from the fork opened."""
    github.add_pull(
        REPO,
        FORK.number,
        head_sha=FORK.head_sha,
        base_sha=BASE,
        diff=DIFF,
        head_ref="feature",
        head_repo="stranger/Hello-World",
        base_files={PAYMENTS: PAYMENTS_BEFORE},
        head_files={PAYMENTS: PAYMENTS_AFTER},
    )
    return github


def delivery(action: str, check: CheckRun, **check_run: Any) -> dict[str, Any]:
    """GitHub's example of a `check_run` delivery (`rerequested`, `requested_action`) for
    Tiebreak's check run `check`, as GitHub sends it for a fork's pull request: no pull
    request named. `check_run` overrides fields of the check run."""
    body = payload(f"check_run/{action}")
    body["installation"]["id"] = INSTALLATION
    owner, name = REPO.split("/")
    body["repository"].update(name=name, full_name=REPO)
    body["repository"]["owner"]["login"] = owner
    as_sent = {"head_sha": check.head_sha, "external_id": check.external_id, **check_run}
    body["check_run"].update(id=check.id, name=check.name, pull_requests=[], **as_sent)
    body["check_run"]["check_suite"].update(head_sha=check.head_sha, pull_requests=[])
    body["sender"]["login"] = "octocat"
    return body


def deliver(client: TestClient, body: dict[str, Any]) -> str:
    """The endpoint's outcome for the delivery."""
    raw, headers = signed("check_run", body)
    answer = client.post("/api/github/webhooks", content=raw, headers=headers)
    assert answer.status_code in (200, 202), answer.text
    outcome: str = answer.json()["outcome"]
    return outcome


async def test_re_run_on_a_fork_s_pull_request_reviews_its_head_again(
    fork: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    await run_review(fork, key, redis_url, agreed(), FORK)
    (check,) = fork.check_runs(REPO)

    assert deliver(client, delivery("rerequested", check)) == "enqueued"
    await run_worker(fork, key, redis_url, agreed(), lambda _: asyncio.sleep(0))

    runs = fork.check_runs(REPO)
    assert [run.head_sha for run in runs] == [FORK.head_sha] * 2
    assert runs[-1].states[-1][0] == "completed"


async def test_accept_on_a_fork_s_pull_request_resolves_its_findings(
    fork: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    fork.set_file(REPO, BASE, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    await run_review(fork, key, redis_url, ScriptedLLM(by_role(**STUBBORN)), FORK)
    (check,) = fork.check_runs(REPO)
    body = delivery("requested_action", check)
    body["requested_action"]["identifier"] = "accept"

    assert deliver(client, body) == "enqueued"
    await run_worker(fork, key, redis_url, ScriptedLLM(by_role()), lambda _: asyncio.sleep(0))

    (check,) = fork.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")
    assert check.output["title"] == "Resolved by @octocat"


@pytest.mark.parametrize(
    ("action", "check_run"),
    [
        ("rerequested", {"head_sha": "e" * 40}),
        ("rerequested", {"external_id": "build-1234"}),
        ("rerequested", {"external_id": ""}),
        ("requested_action", {"head_sha": "e" * 40}),
        ("requested_action", {"external_id": "build-1234"}),
    ],
    ids=[
        "re-run, another head",
        "re-run, another app's id",
        "re-run, no id",
        "button, another head",
        "button, another app's id",
    ],
)
async def test_a_check_run_id_the_delivery_does_not_confirm_steers_nothing(
    fork: FakeGitHub,
    key: AppKey,
    redis_url: str,
    client: TestClient,
    store: Store,
    action: str,
    check_run: dict[str, Any],
) -> None:
    await run_review(fork, key, redis_url, agreed(), FORK)
    (check,) = fork.check_runs(REPO)
    body = delivery(action, check, **check_run)
    if action == "requested_action":
        body["requested_action"]["identifier"] = "accept"

    assert deliver(client, body) == "ignored"
    assert store.queued_jobs() == []


async def test_a_check_run_id_of_another_repository_steers_nothing(
    fork: FakeGitHub, key: AppKey, redis_url: str, client: TestClient, store: Store
) -> None:
    """The same id delivered for a check run of another repository (an id is Tiebreak's, the
    delivery is GitHub's: they must agree)."""
    await run_review(fork, key, redis_url, agreed(), FORK)
    (check,) = fork.check_runs(REPO)
    body = delivery("rerequested", check)
    body["repository"].update(name="Other", full_name="Codertocat/Other")

    assert deliver(client, body) == "ignored"
    assert store.queued_jobs() == []
