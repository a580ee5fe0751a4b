"""The fake GitHub authenticates as GitHub does: the App's JWT, installation tokens and
what they reach, and a collaborator's permission.
"""

import json
import re
import time
from typing import Any

import httpx
import jwt
import pytest
from githubkit import AppAuthStrategy, GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.exception import RequestError, RequestFailed

from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
from tests.fakes.github_api_kit import (
    APP_ID,
    DIFF,
    INSTALLATION,
    NAME,
    NUMBER,
    OTHER_REPO,
    OWNER,
    REPO,
    failure,
    installation_client,
)

# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def stranger_key() -> AppKey:
    return new_app_key()


def exchange_failure(exc: pytest.ExceptionInfo[RequestError[Any]]) -> tuple[int, Any]:
    """The answer to a refused token exchange.

    githubkit exchanges the JWT inside its httpx auth flow, so a refusal there does not reach
    the caller as RequestFailed: it arrives as the RequestError a transport failure raises,
    with the RequestFailed as its cause.
    """
    assert not isinstance(exc.value, RequestFailed)
    cause = exc.value.__cause__
    assert isinstance(cause, RequestFailed)
    assert cause.response.raw_request.url.path.endswith("/access_tokens")
    return cause.response.status_code, cause.response.json()


# -- authentication ---------------------------------------------------------------------------


async def test_the_app_reads_itself_with_its_jwt_and_learns_its_slug(
    fake: FakeGitHub, app_key: AppKey
) -> None:
    app = GitHub(
        AppAuthStrategy(APP_ID, app_key.private_pem),
        base_url=fake.base_url + "/",
        auto_retry=False,
        http_cache=False,
        cache_strategy=MemCacheStrategy(),
        timeout=5,
    )

    response = await app.rest.apps.async_get_authenticated()

    integration = response.parsed_data  # every field GitHub's schema requires is there
    assert integration is not None
    assert (integration.id, integration.slug) == (APP_ID, fake.app_slug)
    (request,) = fake.requests_to("GET", r"/app")
    assert request.headers["authorization"].startswith("Bearer ey")


async def test_the_app_cannot_be_read_with_an_installation_token(
    fake: FakeGitHub, plain: httpx.AsyncClient
) -> None:
    token = fake.issue_token(INSTALLATION)

    response = await plain.get("/app", headers={"authorization": f"token {token}"})

    assert response.status_code == 401


async def test_the_app_jwt_is_exchanged_for_an_installation_token_once(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.pulls.async_get(OWNER, NAME, NUMBER)
    await github.rest.issues.async_list_labels_on_issue(OWNER, NAME, NUMBER)

    (exchange,) = fake.requests_to("POST", rf"/app/installations/{INSTALLATION}/access_tokens")
    assert exchange.status == 201
    assert exchange.headers["authorization"].startswith("Bearer ey")
    assert exchange.response["expires_at"] == "2099-01-01T00:00:00Z"
    token = exchange.response["token"]
    assert re.fullmatch(r"ghs_[A-Za-z0-9]{36}", token)  # as GitHub's look
    calls = [r for r in fake.requests if r.path.startswith("/repos/")]
    assert [r.headers["authorization"] for r in calls] == [f"token {token}"] * 2
    assert fake.issued_tokens == [token]
    assert [f"Bearer {jwt}" for jwt in fake.app_jwts] == [exchange.headers["authorization"]]
    assert fake.problems == []


async def test_a_jwt_signed_with_another_key_is_refused(
    fake: FakeGitHub, stranger_key: AppKey
) -> None:
    async with installation_client(fake, stranger_key) as client:
        with pytest.raises(RequestError) as exc:
            await client.rest.pulls.async_get(OWNER, NAME, NUMBER)

    status, body = exchange_failure(exc)
    assert status == 401
    assert "JSON web token" in body["message"]
    assert fake.requests_to("GET", r"/repos/.*") == []


async def test_a_jwt_for_another_app_is_refused(fake: FakeGitHub, app_key: AppKey) -> None:
    async with installation_client(fake, app_key, app_id=APP_ID + 1) as client:
        with pytest.raises(RequestError) as exc:
            await client.rest.pulls.async_get(OWNER, NAME, NUMBER)

    assert exchange_failure(exc)[0] == 401


async def test_an_unknown_installation_is_not_found(fake: FakeGitHub, app_key: AppKey) -> None:
    async with installation_client(fake, app_key, installation=999) as client:
        with pytest.raises(RequestError) as exc:
            await client.rest.pulls.async_get(OWNER, NAME, NUMBER)

    assert exchange_failure(exc)[0] == 404


@pytest.mark.parametrize(
    "authorization",
    [None, "token ghs_not_issued", "Bearer ghs_not_issued", "Basic b2N0bzpwdw=="],
)
async def test_repository_endpoints_want_an_issued_installation_token(
    fake: FakeGitHub, plain: httpx.AsyncClient, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}

    response = await plain.get(f"/repos/{REPO}/pulls/{NUMBER}", headers=headers)

    assert response.status_code == 401
    assert response.json()["message"] in ("Requires authentication", "Bad credentials")


def app_jwt(key: AppKey, iss: int | str = str(APP_ID), lifetime: int = 540) -> str:
    now = int(time.time())
    claims = json.dumps({"iss": iss, "iat": now - 60, "exp": now + lifetime}).encode()
    # PyJWS signs the claims as given; jwt.encode refuses a numeric iss, which GitHub takes.
    return jwt.PyJWS().encode(claims, key.private_pem, algorithm="RS256")


async def test_the_app_jwt_itself_does_not_open_repository_endpoints(
    app_key: AppKey, plain: httpx.AsyncClient
) -> None:
    headers = {"Authorization": f"Bearer {app_jwt(app_key)}"}

    response = await plain.get(f"/repos/{REPO}/pulls/{NUMBER}", headers=headers)

    assert response.status_code == 401


@pytest.mark.parametrize(
    ("iss", "lifetime", "status"),
    [(APP_ID, 540, 201), (str(APP_ID), 540, 201), (APP_ID, 3600, 401), (APP_ID, -120, 401)],
    ids=["int-iss", "str-iss", "too-long", "expired"],
)
async def test_the_jwt_names_the_app_and_lives_at_most_ten_minutes(
    app_key: AppKey, plain: httpx.AsyncClient, iss: int | str, lifetime: int, status: int
) -> None:
    headers = {"Authorization": f"Bearer {app_jwt(app_key, iss, lifetime)}"}

    response = await plain.post(f"/app/installations/{INSTALLATION}/access_tokens", headers=headers)

    assert response.status_code == status


async def test_a_token_cannot_see_another_installations_repository(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(OTHER_REPO, 1, head_sha="c" * 40, base_sha="d" * 40, diff=DIFF)

    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_get("acme", "elsewhere", 1)

    # GitHub hides what a token cannot see: 404, not 403.
    assert exc.value.response.status_code == 404


async def test_a_token_narrowed_to_some_repositories_sees_only_those(
    fake: FakeGitHub, app_key: AppKey
) -> None:
    fake.add_installation(INSTALLATION, repos=[REPO, "octo/gadgets"])
    fake.add_pull("octo/gadgets", 1, head_sha="c" * 40, base_sha="d" * 40, diff=DIFF)

    async with installation_client(fake, app_key, repositories=["gadgets"]) as client:
        gadget = await client.rest.pulls.async_get("octo", "gadgets", 1)
        with pytest.raises(RequestFailed) as exc:
            await client.rest.pulls.async_get(OWNER, NAME, NUMBER)

    assert gadget.status_code == 200
    assert exc.value.response.status_code == 404
    (exchange,) = fake.requests_to("POST", r"/app/installations/\d+/access_tokens")
    assert exchange.body == {"repositories": ["gadgets"]}


async def test_narrowing_a_token_to_a_repository_outside_the_installation_is_422(
    fake: FakeGitHub, app_key: AppKey
) -> None:
    async with installation_client(fake, app_key, repositories=["elsewhere"]) as client:
        with pytest.raises(RequestError) as exc:
            await client.rest.pulls.async_get(OWNER, NAME, NUMBER)

    assert exchange_failure(exc)[0] == 422


async def test_revoked_tokens_are_refused_although_githubkit_still_caches_them(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.pulls.async_get(OWNER, NAME, NUMBER)
    fake.revoke_tokens()

    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_get(OWNER, NAME, NUMBER)

    assert failure(exc)[0] == 401
    assert failure(exc)[1]["message"] == "Bad credentials"
    assert len(fake.requests_to("POST", r"/app/installations/\d+/access_tokens")) == 1


# -- collaborator permission ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "permission"),
    [
        ("admin", "admin"),
        ("maintain", "write"),
        ("write", "write"),
        ("triage", "read"),
        ("read", "read"),
        ("none", "none"),
    ],
)
async def test_a_collaborators_role_folds_into_githubs_permission(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy], role: str, permission: str
) -> None:
    fake.set_permission(REPO, "Alice", role)

    response = await github.rest.repos.async_get_collaborator_permission_level(OWNER, NAME, "alice")

    data = response.parsed_data
    assert (data.permission, data.role_name) == (permission, role)
    assert data.user is not None
    assert data.user.login == "Alice"  # logins match case-insensitively


async def test_the_permission_of_a_user_the_fake_does_not_know_is_404(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await github.rest.repos.async_get_collaborator_permission_level(OWNER, NAME, "mallory")

    assert failure(exc)[0] == 404
    with pytest.raises(ValueError, match="not one of"):
        fake.set_permission(REPO, "mallory", "owner")


async def test_a_persons_token_posts_as_that_person_and_reaches_only_its_repositories(
    fake: FakeGitHub, plain: httpx.AsyncClient
) -> None:
    token = fake.issue_person_token("alice", repos=[REPO])
    headers = {"Authorization": f"token {token}"}

    posted = await plain.post(
        f"/repos/{REPO}/pulls/{NUMBER}/reviews",
        headers=headers,
        json={"body": "Looks right.", "event": "COMMENT"},
    )
    elsewhere = await plain.get(f"/repos/{OTHER_REPO}/pulls/1", headers=headers)

    assert posted.status_code == 200
    assert posted.json()["user"]["login"] == "alice"
    assert posted.json()["user"]["type"] == "User"
    (review,) = fake.reviews(REPO, NUMBER)
    assert (review.author, review.author_type) == ("alice", "User")
    assert elsewhere.status_code == 404
