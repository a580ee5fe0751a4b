"""The gateway's GitHub Actions calls over real githubkit, against the fake GitHub: a workflow
dispatched, its run found by its title, its artifact downloaded through GitHub's redirect."""

import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from app.github.client import GitHubApp
from app.github.errors import GitHubError
from app.verification.workflow import ARTIFACT, read_result, template_text
from tests.fakes.github_api import AppKey, FakeGitHub
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


async def test_a_dispatched_run_is_found_by_its_title_and_its_result_read(
    github: FakeGitHub, key: AppKey
) -> None:
    ran = threading.Event()

    def runner(given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
        ran.set()
        assert trees["head"] != trees["base"]
        return {"token": given["token"], "head": {"exit_code": 1}, "base": {"exit_code": 0}}

    github.add_workflow(REPO, WORKFLOW, template_text(), runner)
    actions = installation(github, key).actions
    token = "0" * 32

    await actions.check_workflow(REF, WORKFLOW)
    await actions.dispatch(REF, WORKFLOW, "main", inputs(token))
    deadline = time.monotonic() + DEADLINE
    run = None
    while run is None or not run.completed:
        assert time.monotonic() < deadline, "the run never completed"
        run = await actions.find_run(REF, WORKFLOW, f"Tiebreak {token}")
    archive = await actions.artifact(REF, run.id, ARTIFACT, 1024 * 1024)

    assert ran.is_set()
    assert archive is not None
    assert read_result(archive, token).head is not None
    assert await actions.find_run(REF, WORKFLOW, "Tiebreak another") is None
    with pytest.raises(GitHubError, match="larger than 10 bytes"):
        await actions.artifact(REF, run.id, ARTIFACT, 10)


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
        await actions.dispatch(REF, WORKFLOW, "main", inputs("1" * 32))

    assert refused.value.status == status
    assert dispatched.value.status == status


async def test_a_dispatch_with_inputs_the_workflow_lacks_is_refused(
    github: FakeGitHub, key: AppKey
) -> None:
    github.add_workflow(REPO, WORKFLOW, template_text(), lambda given, trees: None)
    actions = installation(github, key).actions

    with pytest.raises(GitHubError, match="Unexpected inputs") as refused:
        await actions.dispatch(REF, WORKFLOW, "main", {**inputs("2" * 32), "secret": "x"})

    assert refused.value.status == 422
