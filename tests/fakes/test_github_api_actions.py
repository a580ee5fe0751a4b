"""The fake GitHub's Actions behave as GitHub's: a dispatch answers 204 (200 with the run's id
when asked for its details, on a server that has them) and starts a run that sends its
`workflow_run` webhooks as it goes, shows who started it and how, and whose logs and artifact
download through a redirect to storage that needs no token. A test may start runs as others
would."""

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
from tests.fakes.github_api.actions import RUN_FAILED, RunDetails
from tests.fakes.github_api_kit import (
    HEAD,
    INSTALLATION,
    NAME,
    OTHER_INSTALLATION,
    OTHER_REPO,
    OWNER,
    REPO,
    failure,
)

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
        self._changed = threading.Condition()

    def __call__(self, event: str, payload: dict[str, Any]) -> None:
        with self._changed:
            self.sent.append((event, payload))
            self._changed.notify_all()
        if payload["action"] == "completed":
            self.completed.set()

    def wait_completed(self, runs: int) -> dict[int, dict[str, Any]]:
        """The `completed` deliveries of `runs` runs, by run, once they are all sent."""

        def done() -> list[dict[str, Any]]:
            return [p for _, p in self.sent if p["action"] == "completed"]

        with self._changed:
            assert self._changed.wait_for(lambda: len(done()) >= runs, DEADLINE)
            return {p["workflow_run"]["id"]: p for p in done()}


def result(given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    return {"token": given["token"], "files": sorted(trees["head"])}


def dispatches(details: object = True) -> dict[str, Any]:
    return {"ref": "main", "inputs": {"token": "t3"}, "return_run_details": details}


async def dispatch_raw(github: GitHub[Any], body: dict[str, Any]) -> httpx.Response:
    """A dispatch with `body` as given: githubkit's own call drops `return_run_details`."""
    url = f"/repos/{OWNER}/{NAME}/actions/workflows/{WORKFLOW}/dispatches"
    answer = await github.arequest("POST", url, json=body)
    return answer.raw_response


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


async def test_a_dispatch_asked_for_its_details_answers_the_run_it_started(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_workflow(REPO, WORKFLOW, TEXT, result)

    answered = await dispatch_raw(github, dispatches())
    plain = await dispatch_raw(github, dispatches(False))

    assert answered.status_code == 200
    first, second = sorted(fake.workflow_runs(REPO), key=lambda run: run.id)
    assert answered.json()["workflow_run_id"] == first.id
    assert answered.json()["run_url"].endswith(f"/repos/{REPO}/actions/runs/{first.id}")
    assert plain.status_code == 204
    # Both dispatched by the installation: the App's bot user, from the branch asked for.
    for run in (first, second):
        assert (run.actor, run.event, run.branch) == (
            (f"{fake.app_slug}[bot]", "Bot"),
            "workflow_dispatch",
            "main",
        )
        assert run.workflow.path == f".github/workflows/{WORKFLOW}"


async def test_a_server_without_run_details_answers_no_content(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_workflow(REPO, WORKFLOW, TEXT, result)
    fake.serve_run_details(RunDetails.IGNORED)

    answered = await dispatch_raw(github, dispatches())

    assert answered.status_code == 204
    assert len(fake.workflow_runs(REPO)) == 1


async def test_a_server_older_than_run_details_refuses_the_key(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_workflow(REPO, WORKFLOW, TEXT, result)
    fake.serve_run_details(RunDetails.REFUSED)

    with pytest.raises(RequestFailed) as refused:
        await dispatch_raw(github, dispatches())

    status, answer = failure(refused)
    assert status == 422
    assert '"return_run_details" is not a permitted key.' in answer["message"]
    assert fake.workflow_runs(REPO) == []


async def test_runs_show_who_started_them_and_are_listed_by_it(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_workflow(REPO, WORKFLOW, TEXT, result)
    fake.add_workflow(REPO, "ci.yml", "name: CI\non: pull_request\n", result)
    fake.add_workflow(OTHER_REPO, WORKFLOW, TEXT, result)
    hooks = Webhooks()
    fake.send_webhooks(hooks)
    token = fake.issue_person_token("writer", repos=[REPO])
    person = GitHub(token, base_url=fake.base_url + "/", auto_retry=False, http_cache=False)

    await person.rest.actions.async_create_workflow_dispatch(
        OWNER, NAME, WORKFLOW, ref="main", inputs={"token": "t4"}
    )
    other = fake.start_run(
        REPO, "ci.yml", title="Verify t4", result={"token": "t4"}, event="pull_request"
    )
    elsewhere = fake.start_run(OTHER_REPO, WORKFLOW, title="Verify t4", result=b"PK")
    with pytest.raises(RequestFailed) as refused:
        await github.rest.actions.async_create_workflow_dispatch(OWNER, NAME, "ci.yml", ref="main")
    listed = await github.rest.actions.async_list_workflow_runs(
        OWNER, NAME, WORKFLOW, event="workflow_dispatch", actor="writer", branch="main"
    )

    (dispatched,) = listed.json()["workflow_runs"]
    assert (dispatched["actor"]["login"], dispatched["actor"]["type"]) == ("writer", "User")
    assert dispatched["triggering_actor"]["login"] == "writer"
    assert (dispatched["path"], dispatched["event"]) == (
        f".github/workflows/{WORKFLOW}",
        "workflow_dispatch",
    )
    assert (other.event, other.actor, other.workflow.path) == (
        "pull_request",
        (f"{fake.app_slug}[bot]", "Bot"),
        ".github/workflows/ci.yml",
    )
    assert failure(refused)[0] == 422
    completed = hooks.wait_completed(3)
    assert completed[elsewhere.id]["installation"] == {"id": OTHER_INSTALLATION}
    assert completed[elsewhere.id]["repository"]["full_name"] == OTHER_REPO
    assert completed[other.id]["workflow_run"]["event"] == "pull_request"
    assert elsewhere.artifact is not None
    assert elsewhere.artifact[1] == b"PK"


async def test_a_run_whose_job_fails_ends_failure_without_an_artifact(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_workflow(REPO, WORKFLOW, TEXT, lambda given, trees: RUN_FAILED)
    hooks = Webhooks()
    fake.send_webhooks(hooks)

    await github.rest.actions.async_create_workflow_dispatch(
        OWNER, NAME, WORKFLOW, ref="main", inputs={"token": "t5"}
    )
    ((run_id, completed),) = hooks.wait_completed(1).items()
    artifacts = await github.rest.actions.async_list_workflow_run_artifacts(OWNER, NAME, run_id)

    assert completed["workflow_run"]["conclusion"] == "failure"
    assert artifacts.json()["artifacts"] == []


async def test_a_run_going_on_when_the_fake_stops_ends_first_sending_its_webhooks(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    """No run outlives its fake, to send its webhooks into a later test."""
    going, release = threading.Event(), threading.Event()

    def slow(given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
        going.set()
        release.wait(DEADLINE)
        return result(given, trees)

    fake.add_workflow(REPO, WORKFLOW, TEXT, slow)
    hooks = Webhooks()
    fake.send_webhooks(hooks)
    await github.rest.actions.async_create_workflow_dispatch(
        OWNER, NAME, WORKFLOW, ref="main", inputs={"token": "t1"}
    )
    assert going.wait(DEADLINE)
    releasing = threading.Timer(0.2, release.set)  # while the fake stops
    releasing.start()
    try:
        fake.stop()
    finally:
        release.set()
        releasing.join()

    assert [p["action"] for _, p in hooks.sent] == ["requested", "in_progress", "completed"]
