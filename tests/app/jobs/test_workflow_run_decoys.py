"""Only the workflow run Tiebreak dispatched settles a finding's test, end to end.

A run's title, `Tiebreak <token>`, is public in the repository's Actions tab. Here another run
titled with it (another workflow's `pull_request` run whose `run-name` a fork's author
chose, a writer's dispatch of the workflow by hand, a run in another installation's
repository) completes first with a passing `tiebreak-result` artifact, its `workflow_run`
webhook delivered and taken; only then does the run Tiebreak dispatched complete. GitHub
answers the dispatch with the run's id (github.com) or with 204 (an older GitHub Enterprise
Server). The pull request's webhook and the runs' webhooks at the real endpoint, a real
worker, the fake GitHub running Tiebreak's template with bash, a scripted model.
"""

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from app.jobs.deps import WorkerDeps
from app.settings import Settings
from app.store import keys
from app.verification.workflow import template_text
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.github_api.actions import Result, RunDetails
from tests.kits.actions import (
    CONFIG,
    DEADLINE,
    PROVEN,
    WORKFLOW,
    Deliveries,
    comment,
    fixed_by_agreement,
    never_finishes,
    review_in_actions,
    template_runner,
)
from tests.kits.artifacts import passing
from tests.kits.review import summary
from tests.scenarios.reviews import BASE, REPO
from tests.scenarios.webhooks import SECRET

OTHER_REPO, OTHER_INSTALLATION = "mallory/Hello-World", 666
CI = "name: CI\nrun-name: ${{ github.event.pull_request.title }}\non: pull_request\n"


@dataclass(frozen=True)
class Decoy:
    """A run titled with the token of Tiebreak's run, started by someone else."""

    repo: str
    workflow: str
    actor: tuple[str, str] | None
    """Login and type; None: the App's bot user (dispatching in another installation)."""
    event: str = "workflow_dispatch"
    branch: str | None = None
    """None: the repository's default branch."""


DECOYS = {
    "another workflow's pull_request run": Decoy(
        REPO, "ci.yml", ("stranger", "User"), "pull_request", "feature"
    ),
    "a writer's dispatch by hand": Decoy(REPO, WORKFLOW, ("writer", "User")),
    "a run in another installation's repository": Decoy(OTHER_REPO, WORKFLOW, None),
}


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


@pytest.mark.parametrize("details", [RunDetails.RETURNED, RunDetails.IGNORED])
@pytest.mark.parametrize("decoy", DECOYS.values(), ids=DECOYS.keys())
async def test_a_run_titled_with_the_token_that_tiebreak_did_not_dispatch_settles_nothing(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    client: TestClient,
    decoy: Decoy,
    details: RunDetails,
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    github.serve_run_details(details)
    github.add_workflow(REPO, "ci.yml", CI, never_finishes)
    github.add_installation(OTHER_INSTALLATION, repos=[OTHER_REPO])
    github.add_workflow(OTHER_REPO, WORKFLOW, template_text(), never_finishes)
    deliveries = Deliveries()
    decoys: list[int] = []
    taken, reviewed = threading.Event(), threading.Event()

    def dispatched(
        given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]
    ) -> Result | None:
        """The run Tiebreak dispatched: its reproduction waits for the decoy to be taken."""
        if not given["patches"]:
            token = given["token"]
            started = github.start_run(
                decoy.repo,
                decoy.workflow,
                title=f"Tiebreak {token}",
                result=passing(token),
                actor=decoy.actor,
                event=decoy.event,
                branch=decoy.branch,
            )
            decoys.append(started.id)
            if not taken.wait(DEADLINE) or reviewed.is_set():
                return None  # the review ended without it: it never finishes
        return template_runner(given, trees)

    async def decoy_taken(deps: WorkerDeps) -> None:
        if decoys and decoys[0] in deliveries.completed and not await _looking(deps):
            taken.set()

    try:
        await review_in_actions(
            github,
            key,
            redis_url,
            fixed_by_agreement(PROVEN),
            client,
            runner=dispatched,
            meanwhile=decoy_taken,
            deliveries=deliveries,
        )
    finally:
        reviewed.set()
        taken.set()

    assert "withdrawn · not reproduced" not in summary(github)
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")
    body = comment(github).body
    assert "**Reproduced**: <code>test&#95;refund.py</code> fails at the head and passes" in body
    assert "**Fix verified**" in body
    # Each of Tiebreak's runs was taken from its own webhook, never answered "duplicate".
    ours = [run.id for run in github.workflow_runs(REPO) if run.id not in decoys]
    assert [deliveries.completed[run] for run in sorted(ours)] == [["enqueued"], ["enqueued"]]
    # The decoy was looked at only where nothing else told it from Tiebreak's run: GitHub
    # named no run for the dispatch, and the decoy ran in the same repository.
    looked_up = github.requests_to("GET", rf"/repos/.*/actions/runs/{decoys[0]}")
    assert bool(looked_up) == (details is RunDetails.IGNORED and decoy.repo == REPO)


async def _looking(deps: WorkerDeps) -> bool:
    """Whether a look at a workflow run is queued or under way."""
    async for _ in deps.redis.scan_iter(match=keys.job(keys.workflow_run_job_id("*", "*"))):
        return True
    return False
