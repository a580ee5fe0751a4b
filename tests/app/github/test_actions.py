"""The gateway's GitHub Actions calls over real githubkit, against the fake GitHub: a workflow
dispatched (its run's id kept where GitHub answers with it), the run it started found again
and no other, its artifact downloaded through GitHub's redirect."""

import time
from collections.abc import Mapping
from typing import Any

import pytest

from app.github.client import GitHubApp
from app.github.errors import GitHubError
from app.github.models import Dispatch, WorkflowRun
from app.verification.workflow import ARTIFACT, read_result, template_text
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.github_api.actions import RunDetails
from tests.scenarios.reviews import APP_ID, BASE, HEAD, INSTALLATION, REF, REPO

WORKFLOW = "tiebreak-verify.yml"
DEADLINE = 30.0


def inputs(token: str) -> dict[str, str]:
    return {
        "token": token,
        "base": BASE,
        "head": HEAD,
        "test_path": "test_bug.py",
        "test_content": "assert False\n",
        "command": "python3 test_bug.py",
    }


def installation(github: FakeGitHub, key: AppKey) -> Any:
    return GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False).installation(
        INSTALLATION
    )


def finished(given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    assert trees["head"] != trees["base"]
    return {"token": given["token"], "head": {"exit_code": 1}, "base": {"exit_code": 0}}


async def until_completed(
    actions: Any, dispatch: Dispatch, run_id: int | None = None
) -> WorkflowRun:
    deadline = time.monotonic() + DEADLINE
    run = None
    while run is None or not run.completed:
        assert time.monotonic() < deadline, "the run never completed"
        run = await actions.find_run(REF, dispatch, run_id)
    assert isinstance(run, WorkflowRun)
    return run


def dispatch_of(token: str, since: float, run_id: int | None = None) -> Dispatch:
    return Dispatch(
        workflow=WORKFLOW, branch="main", title=f"Tiebreak {token}", since=since, run_id=run_id
    )


async def test_a_dispatch_answered_with_its_run_finds_that_run_and_its_result(
    github: FakeGitHub, key: AppKey
) -> None:
    github.add_workflow(REPO, WORKFLOW, template_text(), finished)
    actions = installation(github, key).actions
    token, since = "0" * 32, time.time()

    await actions.check_workflow(REF, WORKFLOW)
    pinned = await actions.dispatch(REF, WORKFLOW, "main", inputs(token))
    run = await until_completed(actions, dispatch_of(token, since, pinned))
    archive = await actions.artifact(REF, run.id, ARTIFACT, 1024 * 1024)

    (started,) = github.workflow_runs(REPO)
    assert pinned == started.id == run.id
    assert archive is not None
    assert read_result(archive, token).head is not None
    # Another run named by a delivery is not the one the dispatch started: not even asked.
    asked = len(github.requests)
    assert await actions.find_run(REF, dispatch_of(token, since, pinned), pinned + 1) is None
    assert len(github.requests) == asked
    with pytest.raises(GitHubError, match="larger than 10 bytes"):
        await actions.artifact(REF, run.id, ARTIFACT, 10)


async def test_a_dispatch_that_refuses_the_key_but_says_its_run_is_pinned_to_that_run(
    github: FakeGitHub, key: AppKey
) -> None:
    """An API version whose every dispatch answers with its run's details no longer knows
    `return_run_details`: refused with it, the dispatch sent again without it still pins
    the run it started."""
    github.add_workflow(REPO, WORKFLOW, template_text(), finished)
    github.serve_run_details(RunDetails.ALWAYS)
    actions = installation(github, key).actions
    token, since = "2" * 32, time.time()

    pinned = await actions.dispatch(REF, WORKFLOW, "main", inputs(token))
    run = await until_completed(actions, dispatch_of(token, since, pinned))

    (started,) = github.workflow_runs(REPO)
    assert pinned == started.id == run.id


@pytest.mark.parametrize("details", [RunDetails.IGNORED, RunDetails.REFUSED])
async def test_without_its_run_a_dispatch_finds_the_apps_run_and_no_decoy_titled_alike(
    github: FakeGitHub, key: AppKey, details: RunDetails
) -> None:
    """An older server answers 204, or refuses `return_run_details` (then the dispatch is
    sent again without it): the run is the App's, of the workflow, dispatched from the
    branch, after the dispatch, titled with the token."""
    github.add_workflow(REPO, WORKFLOW, template_text(), finished)
    github.add_workflow(REPO, "ci.yml", "on: pull_request\n", finished)
    github.serve_run_details(details)
    actions = installation(github, key).actions
    token, since = "1" * 32, time.time()
    title = f"Tiebreak {token}"
    decoys = [
        github.start_run(REPO, WORKFLOW, title=title, result={}, actor=("writer", "User")),
        github.start_run(REPO, "ci.yml", title=title, result={}, event="pull_request"),
        github.start_run(REPO, WORKFLOW, title=title, result={}, branch="feature"),
    ]

    pinned = await actions.dispatch(REF, WORKFLOW, "main", inputs(token))
    run = await until_completed(actions, dispatch_of(token, since))

    (started,) = [r for r in github.workflow_runs(REPO) if r not in decoys]
    assert pinned is None
    assert run.id == started.id
    for decoy in decoys:
        assert await actions.find_run(REF, dispatch_of(token, since), decoy.id) is None
    later = dispatch_of(token, since + 3600)
    assert await actions.find_run(REF, later, started.id) is None  # created before it
    assert await actions.find_run(REF, dispatch_of(token, since), 10**9) is None  # no such run


@pytest.mark.parametrize(("deny", "status"), [(True, 403), (False, 404)])
async def test_a_workflow_the_app_may_not_run_is_refused(
    github: FakeGitHub, key: AppKey, deny: bool, status: int
) -> None:
    if deny:
        github.add_workflow(REPO, WORKFLOW, template_text(), lambda given, trees: None)
        github.deny_actions(INSTALLATION)
    actions = installation(github, key).actions

    with pytest.raises(GitHubError) as refused:
        await actions.check_workflow(REF, WORKFLOW)
    with pytest.raises(GitHubError) as dispatched:
        await actions.dispatch(REF, WORKFLOW, "main", inputs("2" * 32))

    assert refused.value.status == status
    assert dispatched.value.status == status


async def test_a_dispatch_with_inputs_the_workflow_lacks_is_refused(
    github: FakeGitHub, key: AppKey
) -> None:
    github.add_workflow(REPO, WORKFLOW, template_text(), lambda given, trees: None)
    actions = installation(github, key).actions

    with pytest.raises(GitHubError, match="Unexpected inputs") as refused:
        await actions.dispatch(REF, WORKFLOW, "main", {**inputs("3" * 32), "secret": "x"})

    assert refused.value.status == 422
