"""An installation's access token, over real githubkit against the fake GitHub: asked for once
however many calls need it at the same time, kept until a minute before it expires; a call
GitHub refuses with it while it is seconds old sent again, an older one it refuses let go."""

import asyncio
from datetime import UTC, datetime

import httpx
import pytest
from githubkit import GitHub

from app.github.client import GitHubApp
from app.github.errors import GitHubError, TokenRefused
from app.github.tokens import FRESH, MARGIN, InstallationAuth
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.github_api.constants import TOKEN_EXPIRES_AT
from tests.fakes.messages_api import ManualClock
from tests.scenarios.reviews import APP_ID, DIFF, INSTALLATION, NUMBER, REF, REPO

TOKENS = rf"/app/installations/{INSTALLATION}/access_tokens"
PULL = rf"/repos/{REPO}/pulls/{NUMBER}"


@pytest.fixture
def app(github: FakeGitHub, key: AppKey) -> GitHubApp:
    return GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False)


def asked(github: FakeGitHub) -> int:
    """How many times GitHub was asked for the installation's token."""
    return len(github.requests_to("POST", TOKENS))


async def test_calls_sent_at_once_ask_for_one_token(github: FakeGitHub, app: GitHubApp) -> None:
    installation = app.installation(INSTALLATION)

    # A job's first calls: the pull request and its diff, and another job's, at once.
    pull, diff, again = await asyncio.gather(
        installation.pull_request(REF),
        installation.diff(REF),
        app.installation(INSTALLATION).pull_request(REF),
    )

    assert (pull.number, diff, again.number) == (NUMBER, DIFF, NUMBER)
    assert asked(github) == 1


async def test_a_token_is_asked_for_again_a_minute_before_it_expires(
    github: FakeGitHub, app: GitHubApp
) -> None:
    clock = app.tokens.clock = ManualClock()
    installation = app.installation(INSTALLATION)
    await installation.pull_request(REF)
    # What is left of the token as GitHub gave it, on the clock above (a few seconds' leeway
    # for the time this test takes).
    expires = datetime.strptime(TOKEN_EXPIRES_AT, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    left = (expires - datetime.now(UTC)).total_seconds()

    clock.now = left - MARGIN - 5
    await installation.pull_request(REF)
    assert asked(github) == 1

    clock.now = left - MARGIN + 5
    await installation.pull_request(REF)
    assert asked(github) == 2


async def test_a_refused_token_fails_each_call_waiting_for_it_and_the_next_asks_again(
    github: FakeGitHub, app: GitHubApp
) -> None:
    github.fail_next("POST", TOKENS, 404)
    installation = app.installation(INSTALLATION)

    failed = await asyncio.gather(
        installation.pull_request(REF), installation.diff(REF), return_exceptions=True
    )

    assert all(isinstance(f, TokenRefused) and f.answered == 404 for f in failed), failed
    assert asked(github) == 1
    pull = await installation.pull_request(REF)
    assert pull.number == NUMBER
    assert asked(github) == 2


class Waits:
    """The tokens' waits, noted and moving their clock (which the test may move too)."""

    def __init__(self, app: GitHubApp) -> None:
        self.clock = ManualClock()
        self.waited: list[float] = []
        app.tokens.clock = self.clock
        app.tokens.sleep = self.sleep

    async def sleep(self, seconds: float) -> None:
        self.waited.append(seconds)
        self.clock.advance(seconds)


async def test_a_call_refused_the_token_just_given_is_sent_again_with_it(
    github: FakeGitHub, app: GitHubApp
) -> None:
    waits = Waits(app)
    # The token has not reached the server that answers first.
    github.fail_next("GET", PULL, 401)

    pull = await app.installation(INSTALLATION).pull_request(REF)

    assert pull.number == NUMBER
    assert waits.waited == [1.0]
    assert len(github.requests_to("GET", PULL)) == 2
    assert asked(github) == 1


async def test_a_write_refused_the_token_just_given_is_sent_again_whole(
    github: FakeGitHub, app: GitHubApp
) -> None:
    Waits(app)  # the wait on the tokens' clock, not the test's
    github.fail_next("POST", rf"/repos/{REPO}/issues/{NUMBER}/comments", 401)

    await app.installation(INSTALLATION).comment(REF, "The summary.")

    assert [c.body for c in github.issue_comments(REPO, NUMBER)] == ["The summary."]


async def test_a_fresh_token_refused_until_it_is_no_longer_fresh_fails_the_call_and_is_let_go(
    github: FakeGitHub, app: GitHubApp
) -> None:
    waits = Waits(app)
    github.fail_next("GET", PULL, 401, times=3)
    installation = app.installation(INSTALLATION)

    with pytest.raises(GitHubError) as refused:
        await installation.pull_request(REF)

    assert refused.value.status == 401
    # Sent at 0, 1 and 3 s: a fourth, 3 s later still, would find the token no longer fresh.
    assert waits.waited == [1.0, 2.0]
    assert (await installation.pull_request(REF)).number == NUMBER
    assert asked(github) == 2


async def test_an_older_token_refused_fails_the_call_at_once_and_the_next_asks_for_another(
    github: FakeGitHub, app: GitHubApp
) -> None:
    waits = Waits(app)
    installation = app.installation(INSTALLATION)
    await installation.pull_request(REF)
    waits.clock.advance(FRESH + 10)  # revoked since, or this machine's clock behind GitHub's
    github.fail_next("GET", PULL, 401)

    with pytest.raises(GitHubError) as refused:
        await installation.pull_request(REF)

    assert refused.value.status == 401
    assert waits.waited == []
    assert (await installation.pull_request(REF)).number == NUMBER
    assert asked(github) == 2


async def test_a_call_cancelled_while_the_token_is_asked_for_leaves_it_to_the_others(
    github: FakeGitHub, app: GitHubApp
) -> None:
    installation = app.installation(INSTALLATION)

    with github.holding("POST", TOKENS) as asking:
        first = asyncio.create_task(installation.pull_request(REF))
        second = asyncio.create_task(installation.diff(REF))
        assert await asyncio.to_thread(asking.wait, 30)
        first.cancel()
    diff = await second

    assert diff == DIFF
    assert first.cancelled()
    assert asked(github) == 1


async def test_a_request_to_another_host_goes_without_the_token(
    github: FakeGitHub, app: GitHubApp
) -> None:
    client = GitHub("unused", base_url=f"{github.base_url}/")
    flow = InstallationAuth(app.tokens, INSTALLATION).get_auth_flow(client)
    api, elsewhere = (
        httpx.Request("GET", f"{github.base_url}/repos/{REPO}"),
        httpx.Request("GET", "https://codeload.example/octo/shop/tar.gz/main"),
    )

    for request in (api, elsewhere):
        sending = flow.async_auth_flow(request)
        assert await anext(sending) is request
        await sending.aclose()

    assert api.headers["authorization"].startswith("token ")
    assert "authorization" not in elsewhere.headers
    assert asked(github) == 1
