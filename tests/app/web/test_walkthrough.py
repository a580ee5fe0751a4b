"""The walkthrough that opens the summary comment: GitHub's webhook delivered to the endpoint,
a real worker, the fake GitHub, the model scripted.

The tester is scripted to find nothing and to describe, in its report, the files of the diff
it is shown. What a person sees is checked: the summary names each changed file once, a
push edits the same comment with the new file's line, and model text cannot ping anyone or
show an image.
"""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM, by_role
from app.events import PullRequestRef
from app.settings import Settings
from app.web.server import create_app
from tests.app.jobs.test_rereview import NOTES, NOTES_V1, Branch
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.hearing import deliver, run_queued
from tests.kits.review import summaries
from tests.scenarios.debates import ORDERS, ORDERS_V1
from tests.scenarios.reviews import BASE
from tests.scenarios.webhooks import SECRET, payload


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def pushed(ref: PullRequestRef, before: str | None = None) -> dict[str, Any]:
    """GitHub's delivery of the pull request at `ref`'s head: opened, or a push from `before`."""
    delivery = payload("pull_request/synchronize" if before else "pull_request/opened")
    delivery["number"] = delivery["pull_request"]["number"] = ref.number
    delivery["pull_request"]["head"]["sha"] = ref.head_sha
    delivery["pull_request"]["base"]["sha"] = BASE
    if before:
        delivery["before"], delivery["after"] = before, ref.head_sha
    return delivery


async def review(
    client: TestClient,
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    llm: ScriptedLLM,
    ref: PullRequestRef,
    before: str | None = None,
) -> None:
    """GitHub tells Tiebreak of the head `ref`; a worker runs what that queued."""
    assert deliver(client, pushed(ref, before), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, llm)


def describing(extra: str = "") -> ScriptedLLM:
    """A tester that finds nothing and, asked to, describes each file it is shown."""

    def reported(request: LLMRequest) -> dict[str, Any]:
        assert "`walkthrough`" in request.blocks[-1].text
        diff = request.blocks[0].text
        files = [p for p in (ORDERS, NOTES) if f"+++ b/{p}" in diff]
        walkthrough = {
            "description": f"Adds order handling. {extra}",
            "files": [{"path": p, "summary": f"new module {p.split('/')[-1]}"} for p in files],
            "attention": [{"path": files[0], "why": f"totals are computed here {extra}"}],
            "effort": 2,
        }
        return {"findings": [], "walkthrough": walkthrough}

    return ScriptedLLM(by_role(tester=[reported] * 5))


async def test_the_summary_opens_with_a_walkthrough_naming_each_changed_file_once(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    ref = Branch(github).push({ORDERS: ORDERS_V1})

    await review(client, github, key, redis_url, describing(), ref)

    (comment,) = summaries(github, ref.number)
    walkthrough = comment.body.split("#### Walkthrough", 1)[1]
    assert "Adds order handling." in walkthrough
    assert walkthrough.count(ORDERS) == 2  # its line, and where to look
    assert "new module orders.py" in walkthrough
    assert "**Review effort:** 2/5" in walkthrough


async def test_a_push_edits_the_walkthrough_in_place_with_the_new_files_line(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    branch = Branch(github)
    first = branch.push({ORDERS: ORDERS_V1})
    await review(client, github, key, redis_url, describing(), first)
    (before,) = summaries(github, first.number)

    second = branch.push({ORDERS: ORDERS_V1, NOTES: NOTES_V1})
    llm = describing()
    await review(client, github, key, redis_url, llm, second, before=first.head_sha)

    (after,) = summaries(github, second.number)
    assert after.id == before.id
    walkthrough = after.body.split("#### Walkthrough", 1)[1]
    assert walkthrough.count("new module notes.py") == 1
    # Its code did not change: its line is kept, not paid for again.
    assert walkthrough.count("new module orders.py") == 1
    (described,) = llm.requests
    assert f"+++ b/{ORDERS}" not in described.blocks[0].text


async def test_a_walkthrough_cannot_ping_a_team_or_show_an_image(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    ref = Branch(github).push({ORDERS: ORDERS_V1})
    hostile = "cc @octo/security and @mona ![pixel](https://evil.example/p.png)"

    await review(client, github, key, redis_url, describing(hostile), ref)

    (comment,) = summaries(github, ref.number)
    assert "@octo/security" not in comment.body
    assert "@mona" not in comment.body
    assert "![pixel](" not in comment.body
    assert "](https://evil.example" not in comment.body
