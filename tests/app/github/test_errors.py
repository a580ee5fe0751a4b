"""What an installation's call raises when GitHub refuses its access token, over real
githubkit against the fake GitHub: the token is asked for inside the call's auth flow and
githubkit wraps the refusal as it wraps a connection that failed; the gateway tells them
apart."""

from collections.abc import Iterator
from datetime import datetime, timedelta, tzinfo

import githubkit.auth.app
import pytest

from app.events import PullRequestRef
from app.github.client import GitHubApp
from app.github.errors import CLOCK_OFF, TOKEN_REFUSALS, GitHubError, TokenRefused
from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
from tests.fakes.loopback import free_port

REPO, NUMBER, INSTALLATION, APP_ID = "octo/shop", 7, 3, 42
REF = PullRequestRef(
    installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER, head_sha="a" * 40
)
TOKENS = rf"/app/installations/{INSTALLATION}/access_tokens"


@pytest.fixture(scope="module")
def key() -> AppKey:
    return new_app_key()


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha="a" * 40, base_sha="b" * 40, diff="")
        yield fake


async def refusal(base_url: str, key: AppKey, installation: int = INSTALLATION) -> GitHubError:
    app = GitHubApp(APP_ID, key.private_pem, base_url, retry=False)
    with pytest.raises(GitHubError) as raised:
        await app.installation(installation).pull_request(REF)
    return raised.value


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_a_refused_token_says_what_github_means_by_it(
    github: FakeGitHub, key: AppKey, status: int
) -> None:
    github.fail_next("POST", TOKENS, status)

    refused = await refusal(github.base_url, key)

    assert isinstance(refused, TokenRefused)
    assert (refused.answered, refused.cause) == (status, TOKEN_REFUSALS[status])
    # The call itself was never sent: no status a caller could take for the resource's.
    assert refused.status is None
    assert f"installation {INSTALLATION}'s access token" in str(refused)


async def test_an_installation_github_does_not_know_is_refused_as_removed(
    github: FakeGitHub, key: AppKey
) -> None:
    refused = await refusal(github.base_url, key, installation=99)

    assert isinstance(refused, TokenRefused)
    assert refused.cause == TOKEN_REFUSALS[404]


async def test_a_key_github_does_not_have_is_refused_as_the_key(github: FakeGitHub) -> None:
    refused = await refusal(github.base_url, new_app_key())

    assert isinstance(refused, TokenRefused)
    assert refused.cause == TOKEN_REFUSALS[401]
    assert "A JSON web token could not be decoded" in str(refused)


@pytest.mark.parametrize("minutes", [5, -15], ids=["ahead", "behind"])
async def test_a_clock_off_github_s_is_said_to_be_the_clock_not_the_key(
    monkeypatch: pytest.MonkeyPatch, minutes: int
) -> None:
    """githubkit dates the App's JWT by this machine's clock: ahead of GitHub's by more than
    the minute it backdates it, or behind by more than the nine it is valid for, and GitHub
    refuses it with 401, as it refuses a wrong key, but says which claim it refused."""

    class Off(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> "Off":
            return super().now(tz) + timedelta(minutes=minutes)

    monkeypatch.setattr(githubkit.auth.app, "datetime", Off)
    key = new_app_key()  # a JWT githubkit signed with the module's key may still be cached
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github:
        github.add_installation(INSTALLATION, repos=[REPO])
        refused = await refusal(github.base_url, key)

    assert isinstance(refused, TokenRefused)
    assert (refused.answered, refused.cause) == (401, CLOCK_OFF)
    assert "claim" in str(refused)


@pytest.mark.parametrize(
    ("status", "headers"), [(502, {}), (403, {"retry-after": "60"})], ids=["5xx", "rate limit"]
)
async def test_a_token_github_failed_to_give_is_no_refusal(
    github: FakeGitHub, key: AppKey, status: int, headers: dict[str, str]
) -> None:
    github.fail_next("POST", TOKENS, status, headers=headers)

    refused = await refusal(github.base_url, key)

    assert isinstance(refused, TokenRefused)
    assert (refused.answered, refused.cause) == (status, None)


async def test_a_connection_that_fails_is_github_not_reached(key: AppKey) -> None:
    unreachable = await refusal(f"http://127.0.0.1:{free_port()}", key)

    assert not isinstance(unreachable, TokenRefused)
    assert unreachable.status is None
    assert str(unreachable).startswith("GitHub could not be reached")
