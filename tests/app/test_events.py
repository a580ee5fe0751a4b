"""What Tiebreak reads of a webhook (the models of `app.events`) is what GitHub sends: GitHub's
own examples of every event the App handles parse into its model, and the deliveries the tests
build carry GitHub's keys, of GitHub's types, on every path Tiebreak reads."""

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from app.events import CompletedRun, PullKey
from app.web.handlers import ROUTER
from tests.fakes.github_api import FakeGitHub, new_app_key
from tests.fakes.github_api_kit import (
    BASE,
    DIFF,
    HEAD,
    INSTALLATION,
    NAME,
    NUMBER,
    OWNER,
    REPO,
    installation_client,
)
from tests.kits.actions import opened
from tests.scenarios.webhook_shapes import FIXTURES, READ_AS, handled, mismatches
from tests.scenarios.webhooks import signed

EXAMPLES = sorted(FIXTURES.glob("*/*.json"))
HANDLED = [
    path
    for path in EXAMPLES
    if handled(path.parent.name, json.loads(path.read_text()).get("action"))
]
WORKFLOW = """\
name: Verify
run-name: Tiebreak ${{ inputs.token }}
on:
  workflow_dispatch:
    inputs:
      token: {required: true, type: string}
"""


def test_every_event_the_app_handles_has_its_model_and_githubs_example() -> None:
    assert set(READ_AS) == ROUTER.events()
    assert {path.parent.name for path in EXAMPLES} >= ROUTER.events()


@pytest.mark.parametrize("path", HANDLED, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_githubs_examples_parse_into_what_tiebreak_reads(path: Path) -> None:
    event, example = path.parent.name, json.loads(path.read_text())
    # GitHub's examples of some events are a repository's webhook's; an App's delivery adds
    # the installation.
    delivered = {"installation": {"id": INSTALLATION}, **example}

    READ_AS[event].model_validate(delivered)
    assert mismatches(event, delivered) == []


def test_the_kits_pull_request_opened_carries_what_github_sends() -> None:
    assert mismatches("pull_request", opened()) == []


async def test_the_fake_githubs_workflow_run_deliveries_carry_what_github_sends() -> None:
    key = new_app_key()
    sent: list[tuple[str, dict[str, Any]]] = []
    completed = threading.Event()

    def sink(event: str, payload: dict[str, Any]) -> None:
        sent.append((event, payload))
        if payload["action"] == "completed":
            completed.set()

    with FakeGitHub(app_id=4242, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, head_ref="feature", diff=DIFF)
        fake.add_workflow(REPO, "verify.yml", WORKFLOW, lambda given, trees: {"ok": True})
        fake.send_webhooks(sink)
        async with installation_client(fake, key) as github:
            await github.rest.actions.async_create_workflow_dispatch(
                OWNER, NAME, "verify.yml", ref="main", inputs={"token": "t1"}
            )
        assert completed.wait(30)

    assert [(event, payload["action"]) for event, payload in sent][-1] == (
        "workflow_run",
        "completed",
    )
    assert [mismatches(event, payload) for event, payload in sent] == [[], [], []]


def test_a_delivery_without_what_github_sends_is_refused_where_it_is_signed() -> None:
    headless = opened()
    del headless["pull_request"]["head"]["sha"]
    stringly = opened()
    stringly["installation"]["id"] = str(stringly["installation"]["id"])

    assert mismatches("pull_request", headless) == [
        "pull_request opened: no pull_request.head.sha, which GitHub's "
        "pull_request/opened.payload.json has"
    ]
    assert mismatches("pull_request", stringly) == [
        "pull_request opened: installation.id is a string, where GitHub's "
        "pull_request/opened.payload.json has a number"
    ]
    with pytest.raises(AssertionError, match=r"no pull_request\.head\.sha"):
        signed("pull_request", headless)
    assert signed("pull_request", headless, like_github=False)[0].startswith(b"{")


def test_an_action_the_app_does_not_handle_is_not_asked_for_anything() -> None:
    closed: dict[str, Any] = {"action": "closed"}

    assert mismatches("pull_request", closed) == []
    assert mismatches("ping", {"zen": "Keep it logically awesome."}) == []


@pytest.mark.parametrize(
    ("delivered", "ran_there"),
    [
        ({"installation_id": 9, "owner": "Octo", "repo": "SHOP", "repository_id": 77}, True),
        ({"installation_id": 9, "owner": "octo", "repo": "shop", "repository_id": 78}, False),
        ({"installation_id": 8, "owner": "octo", "repo": "shop", "repository_id": 77}, False),
        ({"installation_id": 9, "owner": "octo", "repo": "shop", "repository_id": None}, True),
        ({"installation_id": 9, "owner": "octo", "repo": "cart", "repository_id": None}, False),
    ],
    ids=["same id", "a repository made anew", "another installation", "no id: by name", "other"],
)
def test_a_completed_run_ran_where_its_test_waits_only_in_the_same_repository(
    delivered: dict[str, Any], ran_there: bool
) -> None:
    """A run titled with a test's token counts only in the repository the test was dispatched
    to: by its id where both say it, a name being taken again by a repository made anew."""
    pull = PullKey(installation_id=9, owner="octo", repo="shop", number=3, repository_id=77)

    assert CompletedRun(run_id=1, **delivered).ran_in(pull) is ran_there
