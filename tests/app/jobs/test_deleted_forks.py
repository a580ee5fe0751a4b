"""A pull request whose fork was deleted, end to end: GitHub answers `head.repo: null` for it,
and Tiebreak takes its head for a fork's of unknown origin, never for the repository's own
(its tests do not run in the repository's Actions, `/tiebreak apply` pushes nothing). Whether
the head is the base repository is decided by the repositories' ids, not their names."""

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from agents.models.scripted import ScriptedLLM, by_role
from app.events import CommandCall, CommandRequest, CommentRef, PullRequestRef
from app.settings import Settings
from app.verification.workflow import template_text
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.actions import WORKFLOW, never_finishes
from tests.kits.review import agreed, run_review, run_worker, summaries, summary
from tests.scenarios.debates import (
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    UNDEFINED,
    accept,
    answers,
    concede,
    evaluations,
    patch,
    report,
)
from tests.scenarios.reviews import BASE, DIFF, INSTALLATION, REF, REPO
from tests.scenarios.webhooks import SECRET, payload, signed

FORK = "stranger/Hello-World"
GONE = REF.model_copy(update={"number": 4, "head_sha": "d" * 40})
"""The pull request from the fork that was deleted; its head branch is named `main`."""
CONFIG = f"verify:\n  command: python3 {{test}}\n  workflow: {WORKFLOW}\n  timeout_minutes: 1\n"
NOT_RUN = "Findings' tests were not run"
GITHUB_JSON = "application/vnd.github+json"
"""What githubkit asks GitHub for by default: a pull request as JSON, not its diff."""
PROVEN = {
    **UNDEFINED,
    "reproduction": {"path": "test_refund.py", "content": "import app.payments\n"},
}


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def open_from_fork(github: FakeGitHub, ref: PullRequestRef = GONE) -> None:
    """The pull request `ref`, from the fork's branch `main` (a name the base has too)."""
    github.add_pull(
        REPO,
        ref.number,
        head_sha=ref.head_sha,
        base_sha=BASE,
        diff=DIFF,
        head_ref="main",
        head_repo=FORK,
        base_files={PAYMENTS: PAYMENTS_BEFORE},
        head_files={PAYMENTS: PAYMENTS_AFTER},
    )


def opened(ref: PullRequestRef, head_repo: dict[str, Any] | None) -> dict[str, Any]:
    """GitHub's `opened` delivery of `ref`, its head in `head_repo` (null: none)."""
    delivery = payload("pull_request/opened")
    delivery["installation"]["id"] = INSTALLATION
    delivery["pull_request"]["number"] = ref.number
    delivery["pull_request"]["head"].update(sha=ref.head_sha, ref="main", repo=head_repo)
    delivery["pull_request"]["base"]["sha"] = BASE
    return delivery


def fixed_by_agreement() -> ScriptedLLM:
    """A finding with a test, its fix agreed."""
    return ScriptedLLM(
        by_role(
            tester=[report(PROVEN), evaluations(accept("F1", "Fixed."))],
            coder=[answers(concede("F1", patch(16, "    print('refund', payment.id)")))],
        )
    )


async def review_from_webhook(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient, delivery: dict[str, Any]
) -> None:
    """Deliver the pull request's webhook to the endpoint, then let a worker run what it
    queued, and all that follows."""
    raw, headers = signed("pull_request", delivery)
    answer = client.post("/api/github/webhooks", content=raw, headers=headers)
    assert answer.json()["outcome"] == "enqueued", answer.text
    await run_worker(github, key, redis_url, fixed_by_agreement(), lambda _: asyncio.sleep(0))


@pytest.mark.parametrize("forks", [False, True], ids=["forks' tests off", "forks' tests on"])
async def test_a_deleted_fork_s_tests_never_run_in_the_repository_s_actions(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient, forks: bool
) -> None:
    """Not even where forks' tests run: where a head comes from, GitHub no longer says."""
    github.add_workflow(REPO, WORKFLOW, template_text(), never_finishes)
    open_from_fork(github)
    config = CONFIG + ("  forks: true\n" if forks else "")
    github.set_file(REPO, BASE, ".github/tiebreak.yml", config)
    github.delete_repo(FORK)

    await review_from_webhook(github, key, redis_url, client, opened(GONE, head_repo=None))

    assert github.workflow_runs(REPO) == []
    said = summary(github, GONE.number)
    assert said.count(NOT_RUN) == 1
    assert "the repository of the pull request's head is unknown" in said


async def test_a_fork_named_as_the_repository_but_another_one_is_a_fork(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """GitHub's answer names the head's repository as the base's, with another id: a
    repository deleted and made again under the same name is another repository."""
    github.add_workflow(REPO, WORKFLOW, template_text(), never_finishes)
    open_from_fork(github)
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    answer = _pull_answer(github, GONE.number)
    namesake = {**answer["base"]["repo"], "id": answer["base"]["repo"]["id"] + 1}
    answer["head"]["repo"] = namesake
    # The review reads the pull request once as JSON (its diff, read beside it on the same
    # path, is another media type).
    github.fail_next(
        "GET", rf"/repos/{REPO}/pulls/{GONE.number}", 200, body=answer, accept=GITHUB_JSON
    )

    await review_from_webhook(github, key, redis_url, client, opened(GONE, head_repo=namesake))

    assert github.workflow_runs(REPO) == []
    said = summary(github, GONE.number)
    assert said.count(NOT_RUN) == 1
    assert "comes from a fork" in said


async def test_apply_on_a_deleted_fork_s_pull_request_moves_no_branch_of_the_repository(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    open_from_fork(github)
    github.delete_repo(FORK)
    await run_review(github, key, redis_url, agreed(), GONE)
    comment_id = github.add_issue_comment(REPO, GONE.number, "/tiebreak apply")
    request = CommandRequest(
        pull=GONE,
        login="octocat",
        association="OWNER",
        comment=CommentRef(id=comment_id, kind="issue", thread_id=comment_id),
        calls=[CommandCall(name="apply")],
    )

    await run_worker(
        github,
        key,
        redis_url,
        ScriptedLLM(by_role()),
        lambda queue: queue.enqueue_commands(request, f"comment-{comment_id}"),
    )

    assert github.ref_updates(REPO) == []
    assert github.branch_sha(REPO, "main") == BASE
    kept = {c.id for c in summaries(github, GONE.number)}
    (reply,) = [
        c.body
        for c in github.issue_comments(REPO, GONE.number)
        if c.author_type == "Bot" and c.id not in kept
    ]
    assert "fork was deleted" in reply
    assert "nothing was changed" in reply


def _pull_answer(github: FakeGitHub, number: int) -> dict[str, Any]:
    """The fake GitHub's own answer for the pull request, as the App's token reads it."""
    token = github.issue_token(INSTALLATION)
    answer = httpx.get(
        f"{github.base_url}/repos/{REPO}/pulls/{number}",
        headers={"Authorization": f"token {token}"},
    )
    answer.raise_for_status()
    body: dict[str, Any] = answer.json()
    return body
