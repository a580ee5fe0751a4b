"""Connections to GitHub: kept open between a worker's calls, closed when it stops."""

from collections.abc import Iterator

import pytest

from app.bodies import NewCheckRun
from app.events import PullRequestRef
from app.github.client import GitHubApp
from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key

REPO, NUMBER, INSTALLATION, APP_ID = "octo/shop", 7, 3, 42
REF = PullRequestRef(
    installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER, head_sha="a" * 40
)


@pytest.fixture(scope="module")
def key() -> AppKey:
    return new_app_key()


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha="a" * 40, base_sha="b" * 40, diff="")
        yield fake


async def test_a_kept_alive_apps_calls_share_one_connection(
    github: FakeGitHub, key: AppKey
) -> None:
    app = GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False)
    app.keep_alive()
    try:
        for _ in range(3):
            # A new installation client each time, as each job makes its own.
            installation = app.installation(INSTALLATION)
            await installation.pull_request(REF)
            await installation.create_check_run(REF, NewCheckRun(status="queued"))
    finally:
        await app.aclose()

    # The installation token, then six calls: all on the first connection.
    assert len(github.requests_to("POST", r"/app/installations/3/access_tokens")) == 1
    assert github.connections == 1


async def test_calls_after_the_app_is_closed_still_work_and_leave_no_connection_open(
    github: FakeGitHub, key: AppKey
) -> None:
    app = GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False)
    app.keep_alive()
    await app.installation(INSTALLATION).pull_request(REF)
    await app.aclose()

    pull = await app.installation(INSTALLATION).pull_request(REF)
    second = await app.installation(INSTALLATION).pull_request(REF)

    assert (pull.number, second.number) == (NUMBER, NUMBER)
    # Each call after the close opened its own connection and asked GitHub to close it.
    assert github.connections == 3
    reads = github.requests_to("GET", rf"/repos/{REPO}/pulls/{NUMBER}")
    assert [r.headers.get("connection") for r in reads] == ["keep-alive", "close", "close"]
