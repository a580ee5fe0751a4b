"""The fake GitHub's Actions behave as GitHub's: a dispatch answers 204 and starts a run that
sends its `workflow_run` webhooks as it goes, whose logs and artifact download through a
redirect to storage that needs no token."""

import io
import threading
import zipfile
from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed

from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_api_kit import HEAD, INSTALLATION, NAME, OWNER, REPO, failure

WORKFLOW = "verify.yml"
TEXT = """\
name: Verify
run-name: Verify ${{ inputs.token }}
on:
  workflow_dispatch:
    inputs:
      token: {required: true, type: string}
      head: {required: false, default: "", type: string}
"""
DEADLINE = 30.0


class Webhooks:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.completed = threading.Event()

    def __call__(self, event: str, payload: dict[str, Any]) -> None:
        self.sent.append((event, payload))
        if payload["action"] == "completed":
            self.completed.set()


def result(given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    return {"token": given["token"], "files": sorted(trees["head"])}


async def test_a_dispatched_run_sends_its_webhooks_and_keeps_its_logs_and_artifact(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_workflow(REPO, WORKFLOW, TEXT, result)
    hooks = Webhooks()
    fake.send_webhooks(hooks)

    dispatched = await github.rest.actions.async_create_workflow_dispatch(
        OWNER, NAME, WORKFLOW, ref="main", inputs={"token": "t1", "head": HEAD}
    )
    assert hooks.completed.wait(DEADLINE)
    runs = (await github.rest.actions.async_list_workflow_runs(OWNER, NAME, WORKFLOW)).json()
    (run,) = runs["workflow_runs"]
    artifacts = (
        await github.rest.actions.async_list_workflow_run_artifacts(OWNER, NAME, run["id"])
    ).json()["artifacts"]
    archive = await github.rest.actions.async_download_artifact(
        OWNER, NAME, artifacts[0]["id"], "zip"
    )
    logs = await github.rest.actions.async_download_workflow_run_logs(OWNER, NAME, run["id"])

    assert dispatched.status_code == 204
    assert [(event, p["action"]) for event, p in hooks.sent] == [
        ("workflow_run", "requested"),
        ("workflow_run", "in_progress"),
        ("workflow_run", "completed"),
    ]
    completed = hooks.sent[-1][1]
    assert completed["installation"] == {"id": INSTALLATION}
    assert completed["workflow_run"]["display_title"] == "Verify t1"
    assert (completed["workflow_run"]["status"], completed["workflow_run"]["conclusion"]) == (
        "completed",
        "success",
    )
    assert (run["event"], run["head_branch"], run["display_title"]) == (
        "workflow_dispatch",
        "main",
        "Verify t1",
    )
    # Both downloads went through a 302 to storage, and came back as zips.
    assert archive.raw_response.history[0].status_code == 302
    with zipfile.ZipFile(io.BytesIO(archive.content)) as zipped:
        assert zipped.read("result.json").startswith(b'{"token": "t1"')
    with zipfile.ZipFile(io.BytesIO(logs.content)) as zipped:
        assert '"token": "t1"' in zipped.read(zipped.namelist()[0]).decode()


async def test_storage_links_need_no_token_and_runs_are_hidden_from_other_installations(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy], plain: httpx.AsyncClient
) -> None:
    fake.add_workflow(REPO, WORKFLOW, TEXT, result)
    hooks = Webhooks()
    fake.send_webhooks(hooks)
    await github.rest.actions.async_create_workflow_dispatch(
        OWNER, NAME, WORKFLOW, ref="main", inputs={"token": "t2"}
    )
    assert hooks.completed.wait(DEADLINE)
    run_id = hooks.sent[-1][1]["workflow_run"]["id"]

    anonymous = await plain.get(f"/repos/{REPO}/actions/runs/{run_id}/logs")
    redirected = await github.rest.actions.async_download_workflow_run_logs(
        OWNER, NAME, run_id, headers={}
    )

    assert anonymous.status_code == 401
    storage = redirected.raw_response.history[0].headers["location"]
    assert (await plain.get(storage)).status_code == 200


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"ref": "nowhere", "inputs": {"token": "x"}}, "No ref found for: nowhere"),
        ({"ref": "main", "inputs": {}}, "Required input 'token' not provided"),
        ({"ref": "main", "inputs": {"token": "x", "extra": "y"}}, "Unexpected inputs provided"),
        ({"ref": "main", "inputs": {"token": "x" * 70_000}}, "inputs are too large"),
    ],
)
async def test_a_dispatch_github_would_refuse_is_refused(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    body: dict[str, Any],
    message: str,
) -> None:
    fake.add_workflow(REPO, WORKFLOW, TEXT, result)

    with pytest.raises(RequestFailed) as refused:
        await github.rest.actions.async_create_workflow_dispatch(
            OWNER, NAME, WORKFLOW, ref=body["ref"], inputs=body["inputs"]
        )

    status, answer = failure(refused)
    assert status == 422
    assert message in answer["message"]
    assert fake.workflow_runs(REPO) == []
