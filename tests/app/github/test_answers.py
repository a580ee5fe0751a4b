"""An answer GitHub does not document fails its call as a refusal does, with a `GitHubError`
naming what was asked, over real githubkit against the fake GitHub: never a `KeyError` or a
`TypeError` deep in a job."""

from collections.abc import Awaitable, Callable, Iterator

import pytest

from app.events import PullRequestRef
from app.github.client import GitHubApp, Installation
from app.github.errors import GitHubError
from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key

REPO, NUMBER, INSTALLATION, APP_ID = "octo/shop", 7, 3, 42
HEAD, BASE = "a" * 40, "b" * 40
REF = PullRequestRef(
    installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER, head_sha=HEAD
)

Call = Callable[[Installation], Awaitable[object]]

UNDOCUMENTED: list[tuple[str, str, object, Call, str]] = [
    (
        "GET",
        rf"/repos/{REPO}/pulls/{NUMBER}",
        {"number": NUMBER, "state": "open", "base": {"sha": BASE, "ref": "main"}},
        lambda gh: gh.pull_request(REF),
        "head",
    ),
    (
        "POST",
        rf"/repos/{REPO}/issues/{NUMBER}/comments",
        {"body": "Posted, but GitHub did not say as which comment."},
        lambda gh: gh.comment(REF, "Hello."),
        "id",
    ),
    (
        "GET",
        rf"/repos/{REPO}/check-runs/1",
        {"id": 1, "name": "Tiebreak"},
        lambda gh: gh.check_run_status(REF, 1),
        "status",
    ),
    (
        "GET",
        rf"/repos/{REPO}/pulls/{NUMBER}/comments",
        [{"body": "A review comment without an id.", "path": "a.py"}],
        lambda gh: gh.own_review_comments(REF),
        "0.id",
    ),
    (
        "POST",
        r"/graphql",
        {"data": {"repository": {"pullRequest": {"reviewThreads": {"nodes": []}}}}},
        lambda gh: gh.resolved_threads(REF),
        "pageInfo",
    ),
]


@pytest.fixture(scope="module")
def key() -> AppKey:
    return new_app_key()


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff="")
        yield fake


@pytest.mark.parametrize(
    ("method", "path", "answer", "call", "missing"),
    UNDOCUMENTED,
    ids=["pull request", "comment posted", "check run", "review comments", "review threads"],
)
async def test_an_answer_github_does_not_document_fails_the_call_with_a_github_error(
    github: FakeGitHub,
    key: AppKey,
    method: str,
    path: str,
    answer: object,
    call: Call,
    missing: str,
) -> None:
    github.fail_next(method, path, 200, body=answer)
    gh = GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False).installation(INSTALLATION)

    with pytest.raises(GitHubError) as failed:
        await call(gh)

    assert "is not as documented" in str(failed.value)
    assert missing in str(failed.value)
