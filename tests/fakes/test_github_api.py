"""The fake GitHub API behaves like GitHub where Tiebreak depends on it.

Every test drives the fake through the real githubkit client configured as production will
configure it (a GitHub App, then an installation), over loopback. A few use a client with
githubkit's client-side body validation off, or plain HTTP, to reach the checks GitHub itself
makes behind the ones githubkit makes first.
"""

import asyncio
import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import httpx
import jwt
import pydantic
import pytest
from githubkit import AppAuthStrategy, GitHub, Response
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.exception import (
    GraphQLFailed,
    RequestError,
    RequestFailed,
    SecondaryRateLimitExceeded,
)
from githubkit.rest import Paginator
from githubkit_schemas.latest.models import (
    DiffEntry,
    IssueComment,
    PullRequestReview,
    SimpleUser,
)

from tests.fakes import github_api
from tests.fakes.github_api import (
    AUTO_LABEL_COLOR,
    BODY_TOO_LONG,
    COMMIT_NOT_IN_PULL,
    GRAPHQL_UNSUPPORTED,
    HUNK_BLANK,
    LINE_NOT_IN_DIFF,
    LINE_UNRESOLVED,
    NEEDS_COMMENT,
    NOT_ACCESSIBLE,
    NOT_FAST_FORWARD,
    OBJECT_MISSING,
    ONE_PENDING_REVIEW,
    PATH_INVALID,
    REF_MISSING,
    REPLY_TO_REPLY,
    START_NOT_BEFORE_LINE,
    START_NOT_IN_HUNK,
    AppKey,
    FakeGitHub,
    FakeGitHubError,
    new_app_key,
)

APP_ID = 4242
INSTALLATION = 77
OTHER_INSTALLATION = 78
OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"
OTHER_REPO = "acme/elsewhere"
NUMBER = 7
HEAD, BASE = "a" * 40, "b" * 40
DIFF_MEDIA = "application/vnd.github.diff"

# app.py: hunk 0 covers old 1-4 / new 1-5, hunk 1 old 20-22 / new 21-23.
DIFF = """\
diff --git a/app.py b/app.py
index 1111111..2222222 100644
--- a/app.py
+++ b/app.py
@@ -1,4 +1,5 @@
 import os
-import sys
+import sys, json
+import re
 # the entry point
 def main():
@@ -20,3 +21,3 @@ def main():
     x = 1
-    y = 2
+    y = 3
     return x
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+world
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 4444444..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old_name.py b/new_name.py
similarity index 90%
rename from old_name.py
rename to new_name.py
index 5555555..6666666 100644
--- a/old_name.py
+++ b/new_name.py
@@ -1,2 +1,2 @@
-a = 1
+a = 2
 b = 2
diff --git a/img.png b/img.png
index 7777777..8888888 100644
Binary files a/img.png and b/img.png differ
"""

APP_PATCH = """\
@@ -1,4 +1,5 @@
 import os
-import sys
+import sys, json
+import re
 # the entry point
 def main():
@@ -20,3 +21,3 @@ def main():
     x = 1
-    y = 2
+    y = 3
     return x"""


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def app_key() -> AppKey:
    return new_app_key()


@pytest.fixture(scope="session")
def stranger_key() -> AppKey:
    return new_app_key()


@pytest.fixture
def fake(app_key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=app_key.public_pem) as fake:
        fake.add_repo(REPO)
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_installation(OTHER_INSTALLATION, repos=[OTHER_REPO])
        fake.add_pull(
            REPO,
            NUMBER,
            head_sha=HEAD,
            base_sha=BASE,
            head_ref="feature",
            title="Add widgets",
            body="Adds the widgets.",
            diff=DIFF,
        )
        yield fake


def installation_client(
    fake: FakeGitHub,
    key: AppKey,
    *,
    app_id: int = APP_ID,
    installation: int = INSTALLATION,
    validate: bool = True,
    repositories: list[str] | None = None,
) -> GitHub[AppInstallationAuthStrategy]:
    """The client production builds: a GitHub App client narrowed to one installation."""
    app_auth = AppAuthStrategy(app_id, key.private_pem)
    app = GitHub(
        app_auth,
        base_url=fake.base_url + "/",
        auto_retry=False,
        http_cache=False,
        cache_strategy=MemCacheStrategy(),
        timeout=5,
        rest_api_validate_body=validate,
    )
    if repositories is None:
        return app.with_auth(app_auth.as_installation(installation))
    return app.with_auth(app_auth.as_installation(installation, repositories=repositories))


@pytest.fixture
async def github(
    fake: FakeGitHub, app_key: AppKey
) -> AsyncIterator[GitHub[AppInstallationAuthStrategy]]:
    async with installation_client(fake, app_key) as client:
        yield client


@pytest.fixture
async def unchecked(
    fake: FakeGitHub, app_key: AppKey
) -> AsyncIterator[GitHub[AppInstallationAuthStrategy]]:
    """A client that sends bodies githubkit would refuse, so that GitHub's own checks run."""
    async with installation_client(fake, app_key, validate=False) as client:
        yield client


@pytest.fixture
async def plain(fake: FakeGitHub) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=fake.base_url, timeout=5) as client:
        yield client


def payload(response: Response[Any, Any]) -> Any:
    """The JSON of a githubkit response, untyped (githubkit types `.json()` by the schema)."""
    return response.json()


def failure(exc: pytest.ExceptionInfo[RequestFailed]) -> tuple[int, Any]:
    response = exc.value.response
    return response.status_code, response.json()


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


# -- pull requests ----------------------------------------------------------------------------


async def test_a_pull_request_as_json(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    pull = payload(await github.rest.pulls.async_get(OWNER, NAME, NUMBER))

    assert pull["number"] == NUMBER
    assert (pull["state"], pull["draft"]) == ("open", False)
    assert (pull["title"], pull["body"]) == ("Add widgets", "Adds the widgets.")
    assert (pull["user"]["login"], pull["user"]["type"]) == ("octocat", "User")
    assert (pull["head"]["sha"], pull["head"]["ref"]) == (HEAD, "feature")
    assert (pull["base"]["sha"], pull["base"]["ref"]) == (BASE, "main")
    assert pull["head"]["repo"]["full_name"] == pull["base"]["repo"]["full_name"] == REPO
    assert pull["head"]["repo"]["fork"] is False
    assert pull["html_url"] == f"https://github.com/{REPO}/pull/{NUMBER}"
    assert pull["maintainer_can_modify"] is True
    assert pull["changed_files"] == 5


async def test_a_pull_request_from_a_fork_names_the_fork_as_head_repository(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(REPO, 8, head_sha="e" * 40, base_sha=BASE, head_repo="mallory/widgets", diff=DIFF)

    pull = payload(await github.rest.pulls.async_get(OWNER, NAME, 8))

    assert pull["head"]["repo"]["full_name"] == "mallory/widgets"
    assert pull["head"]["repo"]["fork"] is True
    assert pull["head"]["label"].startswith("mallory:")


@pytest.mark.parametrize("media", [DIFF_MEDIA, "application/vnd.github.v3.diff"])
async def test_the_diff_media_type_answers_the_diff_text(
    github: GitHub[AppInstallationAuthStrategy], media: str
) -> None:
    response = await github.rest.pulls.async_get(OWNER, NAME, NUMBER, headers={"Accept": media})

    assert response.status_code == 200
    assert response.text == DIFF


async def test_a_too_large_diff_is_406_with_githubs_error(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(REPO, 9, head_sha="f" * 40, base_sha=BASE, diff=DIFF, too_large=True)

    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_get(OWNER, NAME, 9, headers={"Accept": DIFF_MEDIA})
    json_pull = await github.rest.pulls.async_get(OWNER, NAME, 9)

    status, body = failure(exc)
    assert status == 406
    assert body["message"].startswith(
        "Sorry, the diff exceeded the maximum number of files (300). "
        "Consider using 'List pull requests files' API"
    )
    assert body["errors"] == [{"resource": "PullRequest", "field": "diff", "code": "too_large"}]
    assert json_pull.status_code == 200  # only the diff media type is refused


async def test_a_diff_of_more_than_300_files_is_406_by_itself(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    patch = "@@ -0,0 +1 @@\n+x"
    files = [{"filename": f"f{i}.txt", "status": "added", "patch": patch} for i in range(301)]
    fake.add_pull(REPO, 10, head_sha="f" * 40, base_sha=BASE, files=files)

    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_get(OWNER, NAME, 10, headers={"Accept": DIFF_MEDIA})

    assert exc.value.response.status_code == 406


async def test_an_unknown_pull_request_is_404(
    github: GitHub[AppInstallationAuthStrategy],
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_get(OWNER, NAME, 404)

    assert failure(exc)[0] == 404
    assert failure(exc)[1]["message"] == "Not Found"


# -- pull request files -----------------------------------------------------------------------


async def test_files_paginate_through_githubkit_as_diff_entries(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    # mypy cannot infer the item type of paginate(); production code must annotate it.
    pages: Paginator[DiffEntry] = github.rest.paginate(
        github.rest.pulls.async_list_files,
        owner=OWNER,
        repo=NAME,
        pull_number=NUMBER,
        per_page=2,
    )
    entries = [entry async for entry in pages]

    assert [(e.filename, e.status) for e in entries] == [
        ("app.py", "modified"),
        ("new.txt", "added"),
        ("gone.txt", "removed"),
        ("new_name.py", "renamed"),
        ("img.png", "modified"),
    ]
    assert entries[0].patch == APP_PATCH
    assert (entries[0].additions, entries[0].deletions, entries[0].changes) == (3, 2, 5)
    assert entries[3].previous_filename == "old_name.py"
    assert not entries[4].patch  # binary: no patch, as on GitHub
    calls = fake.requests_to("GET", rf"/repos/{REPO}/pulls/{NUMBER}/files")
    assert [r.query.get("page", "1") for r in calls] == ["1", "2", "3"]


async def test_files_pages_carry_githubs_link_header(
    fake: FakeGitHub, plain: httpx.AsyncClient
) -> None:
    token = fake.issue_token(INSTALLATION)
    headers = {"Authorization": f"token {token}"}
    path = f"/repos/{REPO}/pulls/{NUMBER}/files"
    url = f"{fake.base_url}{path}"

    first = await plain.get(path, params={"per_page": 2}, headers=headers)
    middle = await plain.get(path, params={"per_page": 2, "page": 2}, headers=headers)
    last = await plain.get(path, params={"per_page": 2, "page": 3}, headers=headers)
    beyond = await plain.get(path, params={"per_page": 2, "page": 4}, headers=headers)
    default = await plain.get(path, headers=headers)

    assert first.headers["link"] == (
        f'<{url}?per_page=2&page=2>; rel="next", <{url}?per_page=2&page=3>; rel="last"'
    )
    assert middle.headers["link"] == (
        f'<{url}?per_page=2&page=1>; rel="prev", <{url}?per_page=2&page=3>; rel="next", '
        f'<{url}?per_page=2&page=3>; rel="last", <{url}?per_page=2&page=1>; rel="first"'
    )
    assert last.headers["link"] == (
        f'<{url}?per_page=2&page=2>; rel="prev", <{url}?per_page=2&page=1>; rel="first"'
    )
    assert [len(r.json()) for r in (first, middle, last, beyond, default)] == [2, 2, 1, 0, 5]
    assert "link" not in default.headers
    assert first.json()[0]["contents_url"] == (
        f"{fake.base_url}/repos/{REPO}/contents/app.py?ref={HEAD}"
    )


async def test_files_can_be_given_explicitly(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(
        REPO,
        11,
        head_sha="f" * 40,
        base_sha=BASE,
        files=[
            {"filename": "a.py", "status": "modified", "patch": "@@ -1 +1,2 @@\n x\n+y"},
            {"filename": "huge.json", "status": "modified", "additions": 9000, "deletions": 1},
        ],
    )

    files = payload(await github.rest.pulls.async_list_files(OWNER, NAME, 11))
    diff = await github.rest.pulls.async_get(OWNER, NAME, 11, headers={"Accept": DIFF_MEDIA})

    assert [(f["filename"], f["additions"], f["deletions"]) for f in files] == [
        ("a.py", 1, 0),
        ("huge.json", 9000, 1),
    ]
    assert "patch" not in files[1]
    assert "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n x\n+y\n" in diff.text


# -- contents ---------------------------------------------------------------------------------


async def test_a_missing_file_or_ref_is_404(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.set_file(REPO, HEAD, "policy.yml", "rounds: 2\n")

    with pytest.raises(RequestFailed) as missing:
        await github.rest.repos.async_get_content(OWNER, NAME, "other.yml", ref=HEAD)
    with pytest.raises(RequestFailed) as unknown_ref:
        await github.rest.repos.async_get_content(OWNER, NAME, "policy.yml", ref="c" * 40)

    assert failure(missing)[0] == 404
    assert failure(missing)[1]["message"] == "Not Found"
    assert failure(unknown_ref)[0] == 404


async def test_a_file_comes_base64_encoded_in_lines_of_60(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    text = "rounds: 2\n" + "x" * 200 + "\nünïcode\n"
    fake.set_file(REPO, HEAD, ".tiebreak/policy.yml", text)

    response = await github.rest.repos.async_get_content(
        OWNER, NAME, ".tiebreak/policy.yml", ref=HEAD
    )

    body = payload(response)
    assert (body["type"], body["encoding"]) == ("file", "base64")
    assert (body["path"], body["name"]) == (".tiebreak/policy.yml", "policy.yml")
    assert body["size"] == len(text.encode())
    lines = body["content"].split("\n")
    assert lines[-1] == ""  # every line ends with a newline
    assert all(len(line) == 60 for line in lines[:-2])
    assert base64.b64decode(body["content"]).decode() == text
    git_blob = b"blob %d\0" % len(text.encode()) + text.encode()
    assert body["sha"] == hashlib.sha1(git_blob).hexdigest()
    parsed = response.parsed_data  # the strict model accepts the fake's answer
    assert getattr(parsed, "content", None) == body["content"]


async def test_a_file_comes_raw_with_the_raw_media_type(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.set_file(REPO, "main", "README.md", "# Widgets\n")

    response = await github.rest.repos.async_get_content(
        OWNER, NAME, "README.md", headers={"Accept": "application/vnd.github.raw+json"}
    )

    assert response.text == "# Widgets\n"


async def test_a_branch_and_its_head_sha_are_the_same_ref(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.set_file(REPO, "feature", "a.py", "on the branch\n")
    fake.set_file(REPO, BASE, "b.py", "on the base\n")

    by_sha = await github.rest.repos.async_get_content(OWNER, NAME, "a.py", ref=HEAD)
    by_branch = await github.rest.repos.async_get_content(OWNER, NAME, "b.py", ref="main")
    default = await github.rest.repos.async_get_content(OWNER, NAME, "b.py")

    assert base64.b64decode(payload(by_sha)["content"]) == b"on the branch\n"
    assert base64.b64decode(payload(by_branch)["content"]) == b"on the base\n"
    assert payload(default)["sha"] == payload(by_branch)["sha"]


async def test_a_directory_lists_its_entries(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.set_file(REPO, HEAD, "src/a.py", "a\n")
    fake.set_file(REPO, HEAD, "src/pkg/b.py", "b\n")

    listing = payload(await github.rest.repos.async_get_content(OWNER, NAME, "src", ref=HEAD))

    assert [(e["name"], e["type"], e["path"]) for e in listing] == [
        ("a.py", "file", "src/a.py"),
        ("pkg", "dir", "src/pkg"),
    ]


# -- check runs -------------------------------------------------------------------------------


async def test_a_check_run_is_created_then_completed_and_its_history_kept(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    created = await github.rest.checks.async_create(
        OWNER,
        NAME,
        name="Tiebreak",
        head_sha=HEAD,
        status="in_progress",
        external_id="review-1",
        details_url="https://tiebreak.example/reviews/1",
        output={"title": "Reviewing", "summary": "The agents are debating."},
    )
    run_id = payload(created)["id"]
    updated = await github.rest.checks.async_update(
        OWNER,
        NAME,
        run_id,
        status="completed",
        conclusion="neutral",
        output={"title": "2 findings", "summary": "See below.", "text": "Details."},
        actions=[{"label": "Re-review", "description": "Run again", "identifier": "rerun"}],
    )

    assert created.status_code == 201
    body = payload(created)
    assert (body["name"], body["head_sha"], body["status"]) == ("Tiebreak", HEAD, "in_progress")
    assert body["conclusion"] is None
    assert body["html_url"] == f"https://github.com/{REPO}/runs/{run_id}"
    assert body["details_url"] == "https://tiebreak.example/reviews/1"
    assert body["output"]["title"] == "Reviewing"
    assert created.parsed_data.id == run_id  # the strict model accepts the fake's answer
    assert updated.status_code == 200
    assert (payload(updated)["status"], payload(updated)["conclusion"]) == ("completed", "neutral")
    assert payload(updated)["completed_at"]
    (run,) = fake.check_runs(REPO)
    assert run.states == [("in_progress", None), ("completed", "neutral")]
    assert [h["output"]["title"] for h in run.history] == ["Reviewing", "2 findings"]
    assert run.output["text"] == "Details."
    assert run.actions[0]["identifier"] == "rerun"
    assert run.external_id == "review-1"


def annotations(n: int, start: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "path": "app.py",
            "start_line": line,
            "end_line": line,
            "annotation_level": "warning",
            "message": f"finding {line}",
        }
        for line in range(start, start + n)
    ]


async def test_annotations_of_successive_updates_append(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    run_id = payload(
        await github.rest.checks.async_create(OWNER, NAME, name="Tiebreak", head_sha=HEAD)
    )["id"]
    for start in (1, 51):
        output: Any = {"title": "Findings", "summary": "…", "annotations": annotations(50, start)}
        await github.rest.checks.async_update(OWNER, NAME, run_id, output=output)
    final = await github.rest.checks.async_get(OWNER, NAME, run_id)

    assert payload(final)["output"]["annotations_count"] == 100
    (run,) = fake.check_runs(REPO)
    assert [a["start_line"] for a in run.annotations] == list(range(1, 101))
    assert [h["output"]["annotations_count"] for h in run.history] == [0, 50, 100]
    assert run.states == [("queued", None)] * 3


async def test_more_than_50_annotations_in_one_request_is_422(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    unchecked: GitHub[AppInstallationAuthStrategy],
) -> None:
    output: Any = {"title": "Findings", "summary": "…", "annotations": annotations(51)}
    # githubkit refuses it before sending...
    with pytest.raises(pydantic.ValidationError):
        await github.rest.checks.async_create(
            OWNER, NAME, name="Tiebreak", head_sha=HEAD, output=output
        )
    assert fake.requests_to("POST", r".*/check-runs") == []

    # ...and GitHub refuses it too.
    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.checks.async_create(
            OWNER, NAME, name="Tiebreak", head_sha=HEAD, output=output
        )

    assert failure(exc)[0] == 422
    assert fake.check_runs(REPO) == []


async def test_a_conclusion_completes_the_run(
    fake: FakeGitHub, unchecked: GitHub[AppInstallationAuthStrategy]
) -> None:
    created = await unchecked.rest.checks.async_create(
        OWNER, NAME, name="Tiebreak", head_sha=HEAD, status="in_progress", conclusion="success"
    )

    assert (payload(created)["status"], payload(created)["conclusion"]) == ("completed", "success")


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "waiting"},  # GitHub Actions only
        {"status": "bogus"},
        {"conclusion": "stale"},  # GitHub only
        {"conclusion": "bogus"},
        {"status": "completed"},  # without a conclusion
        {"completed_at": "2026-01-01T00:00:00Z"},  # without a conclusion
        {"output": {"title": "no summary"}},
        {"actions": [{"label": "x", "description": "y", "identifier": "z"}] * 4},
        {"actions": [{"label": "a label of more than 20", "description": "y", "identifier": "z"}]},
        {"output": {"title": "t", "summary": "s", "annotations": [{"path": "app.py"}]}},
    ],
)
async def test_github_refuses_a_check_run_it_cannot_take(
    fake: FakeGitHub, unchecked: GitHub[AppInstallationAuthStrategy], fields: dict[str, Any]
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.checks.async_create(
            OWNER, NAME, name="Tiebreak", head_sha=HEAD, **fields
        )

    assert failure(exc)[0] == 422
    assert fake.check_runs(REPO) == []


async def test_a_check_run_on_an_unknown_commit_is_422(
    github: GitHub[AppInstallationAuthStrategy],
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await github.rest.checks.async_create(OWNER, NAME, name="Tiebreak", head_sha="c" * 40)

    assert failure(exc) == (
        422,
        {**failure(exc)[1], "message": f"No commit found for SHA: {'c' * 40}"},
    )


async def test_a_refused_update_changes_nothing(
    fake: FakeGitHub, unchecked: GitHub[AppInstallationAuthStrategy]
) -> None:
    run_id = payload(
        await unchecked.rest.checks.async_create(
            OWNER, NAME, name="Tiebreak", head_sha=HEAD, status="in_progress"
        )
    )["id"]

    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.checks.async_update(
            OWNER, NAME, run_id, data=cast(Any, {"completed_at": "2026-01-01T00:00:00Z"})
        )
    with pytest.raises(RequestFailed) as missing:
        await unchecked.rest.checks.async_update(OWNER, NAME, run_id + 1000, status="queued")

    assert failure(exc)[0] == 422
    assert failure(missing)[0] == 404
    (run,) = fake.check_runs(REPO)
    assert run.states == [("in_progress", None)]


# -- reviews ----------------------------------------------------------------------------------


async def test_a_review_with_inline_comments_is_stored(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    response = await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        commit_id=HEAD,
        body="Two findings.",
        event="COMMENT",
        comments=[
            {"path": "app.py", "line": 3, "side": "RIGHT", "body": "An added line."},
            {"path": "app.py", "line": 2, "side": "LEFT", "body": "A removed line."},
            {"path": "app.py", "line": 5, "body": "A context line (side defaults to RIGHT)."},
            {
                "path": "app.py",
                "start_line": 2,
                "start_side": "RIGHT",
                "line": 4,
                "side": "RIGHT",
                "body": "A range within one hunk.",
            },
            {"path": "new.txt", "line": 2, "side": "RIGHT", "body": "In an added file."},
            {"path": "gone.txt", "line": 1, "side": "LEFT", "body": "In a removed file."},
        ],
    )

    assert response.status_code == 200
    body = payload(response)
    assert (body["state"], body["body"]) == ("COMMENTED", "Two findings.")
    assert body["html_url"].startswith(f"https://github.com/{REPO}/pull/{NUMBER}#")
    assert body["user"]["login"] == "tiebreak[bot]"
    (review,) = fake.reviews(REPO, NUMBER)
    assert (review.id, review.event, review.commit_id) == (body["id"], "COMMENT", HEAD)
    assert [(c.path, c.line, c.side) for c in review.comments] == [
        ("app.py", 3, "RIGHT"),
        ("app.py", 2, "LEFT"),
        ("app.py", 5, "RIGHT"),
        ("app.py", 4, "RIGHT"),
        ("new.txt", 2, "RIGHT"),
        ("gone.txt", 1, "LEFT"),
    ]
    assert (review.comments[3].start_line, review.comments[3].start_side) == (2, "RIGHT")
    assert len({c.id for c in review.comments}) == 6


async def test_reviews_are_listed_and_parse_with_githubkits_models(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, body="One.", event="COMMENT")
    await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, event="APPROVE")

    pages: Paginator[PullRequestReview] = github.rest.paginate(
        github.rest.pulls.async_list_reviews, owner=OWNER, repo=NAME, pull_number=NUMBER
    )
    reviews = [review async for review in pages]

    assert [(r.state, r.body, r.commit_id) for r in reviews] == [
        ("COMMENTED", "One.", HEAD),
        ("APPROVED", "", HEAD),
    ]


@pytest.mark.parametrize(
    ("comment", "error"),
    [
        ({"path": "nope.py", "line": 1}, f"{PATH_INVALID} and {HUNK_BLANK}"),
        ({"path": "img.png", "line": 1}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),
        ({"path": "app.py", "line": 12}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),  # between hunks
        ({"path": "app.py", "line": 6, "side": "LEFT"}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),
        ({"path": "new.txt", "line": 1, "side": "LEFT"}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),
        ({"path": "gone.txt", "line": 1}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),  # RIGHT
        ({"path": "app.py", "start_line": 2, "line": 22}, START_NOT_IN_HUNK),
        ({"path": "app.py", "start_line": 12, "line": 22}, START_NOT_IN_HUNK),
        ({"path": "app.py", "start_line": 4, "line": 2}, START_NOT_BEFORE_LINE),
        ({"path": "app.py", "start_line": 3, "line": 3}, START_NOT_BEFORE_LINE),
        ({"path": "app.py"}, LINE_UNRESOLVED),
    ],
    ids=[
        "path-not-in-diff",
        "binary-file",
        "line-between-hunks",
        "left-beyond-old-hunk",
        "left-in-added-file",
        "right-on-removed-file",
        "range-across-hunks",
        "start-outside-hunks",
        "start-after-line",
        "start-equals-line",
        "no-line",
    ],
)
async def test_one_misplaced_comment_fails_the_whole_review(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    comment: dict[str, Any],
    error: str,
) -> None:
    good = {"path": "app.py", "line": 3, "side": "RIGHT", "body": "Fine."}

    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_create_review(
            OWNER,
            NAME,
            NUMBER,
            body="Findings.",
            event="COMMENT",
            comments=[good, {**comment, "body": "Misplaced."}],
        )

    status, body = failure(exc)
    assert status == 422
    assert body["message"] == "Unprocessable Entity"
    assert body["errors"] == [error]
    assert body["documentation_url"].endswith("#create-a-review-for-a-pull-request")
    assert fake.reviews(REPO, NUMBER) == []


@pytest.mark.parametrize(
    ("event", "body", "comments", "accepted"),
    [
        ("COMMENT", "", [], False),
        ("REQUEST_CHANGES", "", [], False),
        ("COMMENT", "", [{"path": "app.py", "line": 3, "body": "Inline only."}], True),
        ("APPROVE", "", [], True),
        ("REQUEST_CHANGES", "Please fix.", [], True),
    ],
)
async def test_a_verdict_needs_a_body_or_an_inline_comment(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    event: Any,
    body: str,
    comments: Any,
    accepted: bool,
) -> None:
    async def review() -> None:
        await github.rest.pulls.async_create_review(
            OWNER, NAME, NUMBER, event=event, body=body, comments=comments
        )

    if accepted:
        await review()
    else:
        with pytest.raises(RequestFailed) as exc:
            await review()
        assert failure(exc)[0] == 422
        assert failure(exc)[1]["errors"] == [NEEDS_COMMENT]
    assert len(fake.reviews(REPO, NUMBER)) == int(accepted)


async def test_a_pending_review_blocks_another_review(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    pending = await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER)

    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_create_review(
            OWNER, NAME, NUMBER, body="Done.", event="COMMENT"
        )

    assert payload(pending)["state"] == "PENDING"
    assert "submitted_at" not in payload(pending)
    assert failure(exc)[1]["errors"] == [ONE_PENDING_REVIEW]


async def test_a_review_may_name_an_earlier_head_but_no_other_commit(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(REPO, NUMBER, head_sha="9" * 40, base_sha=BASE, head_ref="feature", diff=DIFF)

    earlier = await github.rest.pulls.async_create_review(
        OWNER, NAME, NUMBER, commit_id=HEAD, body="On the old head.", event="COMMENT"
    )
    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_create_review(
            OWNER, NAME, NUMBER, commit_id="c" * 40, body="Elsewhere.", event="COMMENT"
        )
    default = await github.rest.pulls.async_create_review(
        OWNER, NAME, NUMBER, body="No commit named.", event="COMMENT"
    )

    assert payload(earlier)["commit_id"] == HEAD
    assert failure(exc)[1]["errors"] == [COMMIT_NOT_IN_PULL]
    assert payload(default)["commit_id"] == "9" * 40


async def test_a_comment_may_use_a_diff_position(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    # Position 8 is the first line below app.py's second hunk header (which is position 7).
    await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        event="COMMENT",
        comments=[{"path": "app.py", "position": 8, "body": "x = 1"}],
    )
    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_create_review(
            OWNER,
            NAME,
            NUMBER,
            event="COMMENT",
            comments=[{"path": "app.py", "position": 7, "body": "The header."}],
        )

    (review,) = fake.reviews(REPO, NUMBER)
    assert (review.comments[0].line, review.comments[0].side) == (21, "RIGHT")
    assert failure(exc)[0] == 422
    assert [d.position for d in fake.diff_lines(REPO, NUMBER, "app.py")][5:7] == [6, 8]


# -- labels -----------------------------------------------------------------------------------


async def test_creating_an_existing_label_is_422_already_exists(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    created = await github.rest.issues.async_create_label(
        OWNER, NAME, name="Tiebreak: unresolved", color="d73a4a", description="Agents disagree."
    )

    with pytest.raises(RequestFailed) as exc:
        await github.rest.issues.async_create_label(
            OWNER, NAME, name="tiebreak: UNRESOLVED", color="000000"
        )

    assert created.status_code == 201
    assert (payload(created)["name"], payload(created)["color"]) == (
        "Tiebreak: unresolved",
        "d73a4a",
    )
    assert created.parsed_data.description == "Agents disagree."
    status, body = failure(exc)
    assert status == 422
    assert body["message"] == "Validation Failed"
    assert body["errors"] == [{"resource": "Label", "code": "already_exists", "field": "name"}]
    assert [label.color for label in fake.labels(REPO)] == ["d73a4a"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"color": "red"}, "color"), ({"description": "x" * 101}, "description")],
)
async def test_a_label_needs_a_hex_color_and_a_short_description(
    fake: FakeGitHub,
    unchecked: GitHub[AppInstallationAuthStrategy],
    fields: dict[str, Any],
    field: str,
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.issues.async_create_label(OWNER, NAME, name="x", **fields)

    status, body = failure(exc)
    assert status == 422
    assert [e["field"] for e in body["errors"]] == [field]
    assert fake.labels(REPO) == []


async def test_adding_a_missing_label_to_an_issue_creates_it_grey(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_label(REPO, "bug", color="d73a4a")

    response = await github.rest.issues.async_add_labels(
        OWNER, NAME, NUMBER, labels=["BUG", "tiebreak"]
    )

    assert response.status_code == 200
    assert [(x["name"], x["color"]) for x in payload(response)] == [
        ("bug", "d73a4a"),
        ("tiebreak", AUTO_LABEL_COLOR),
    ]
    assert fake.issue_labels(REPO, NUMBER) == ["bug", "tiebreak"]
    created = next(label for label in fake.labels(REPO) if label.name == "tiebreak")
    assert created.description is None


async def test_removing_a_label_answers_the_rest_and_404_when_absent(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.issues.async_add_labels(
        OWNER, NAME, NUMBER, labels=["needs work", "tiebreak"]
    )

    removed = await github.rest.issues.async_remove_label(OWNER, NAME, NUMBER, "needs work")
    with pytest.raises(RequestFailed) as exc:
        await github.rest.issues.async_remove_label(OWNER, NAME, NUMBER, "needs work")
    listed = await github.rest.issues.async_list_labels_on_issue(OWNER, NAME, NUMBER)

    assert [x["name"] for x in payload(removed)] == ["tiebreak"]
    assert failure(exc)[0] == 404
    assert failure(exc)[1]["message"] == "Label does not exist"
    labels: list[Any] = listed.parsed_data
    assert [x.name for x in labels] == ["tiebreak"]
    (delete, _) = fake.requests_to("DELETE", r".*/labels/.*")
    assert delete.path.endswith("/labels/needs%20work")  # sent URL-encoded, read decoded


# -- issue comments ---------------------------------------------------------------------------


async def test_an_issue_comment_is_posted_by_the_app_listed_and_edited(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    asked = fake.add_issue_comment(REPO, NUMBER, "/tiebreak review", author="alice")

    created = await github.rest.issues.async_create_comment(
        OWNER, NAME, NUMBER, body="Reviewing again."
    )
    comment_id = created.parsed_data.id
    edited = await github.rest.issues.async_update_comment(
        OWNER, NAME, comment_id, body="Reviewed: 2 findings."
    )
    listed: list[Any] = (
        await github.rest.issues.async_list_comments(OWNER, NAME, NUMBER)
    ).parsed_data
    read = await github.rest.issues.async_get_comment(OWNER, NAME, asked)

    assert created.status_code == 201
    user = created.parsed_data.user
    assert user is not None
    assert (user.login, user.type) == ("tiebreak[bot]", "Bot")
    assert created.parsed_data.html_url == (
        f"https://github.com/{REPO}/pull/{NUMBER}#issuecomment-{comment_id}"
    )
    assert (edited.status_code, edited.parsed_data.body) == (200, "Reviewed: 2 findings.")
    assert [(c.id, c.body) for c in listed] == [
        (asked, "/tiebreak review"),
        (comment_id, "Reviewed: 2 findings."),
    ]
    assert read.parsed_data.user is not None
    assert read.parsed_data.user.login == "alice"
    assert [(c.author, c.author_type, c.body) for c in fake.issue_comments(REPO, NUMBER)] == [
        ("alice", "User", "/tiebreak review"),
        ("tiebreak[bot]", "Bot", "Reviewed: 2 findings."),
    ]
    assert payload(await github.rest.pulls.async_get(OWNER, NAME, NUMBER))["comments"] == 2


async def test_an_issue_comment_longer_than_65536_characters_is_422(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await github.rest.issues.async_create_comment(OWNER, NAME, NUMBER, body="x" * 65537)
    fitting = await github.rest.issues.async_create_comment(OWNER, NAME, NUMBER, body="x" * 65536)

    status, body = failure(exc)
    assert (status, body["message"]) == (422, "Validation Failed")
    assert body["errors"] == [
        {
            "resource": "IssueComment",
            "code": "unprocessable",
            "field": "data",
            "message": BODY_TOO_LONG,
        }
    ]
    assert fitting.status_code == 201
    assert len(fake.issue_comments(REPO, NUMBER)) == 1


async def test_comments_of_an_unknown_pull_request_or_comment_are_404(
    github: GitHub[AppInstallationAuthStrategy],
) -> None:
    with pytest.raises(RequestFailed) as pull:
        await github.rest.issues.async_create_comment(OWNER, NAME, 404, body="Hello.")
    with pytest.raises(RequestFailed) as comment:
        await github.rest.issues.async_update_comment(OWNER, NAME, 404, body="Hello.")

    assert failure(pull)[0] == failure(comment)[0] == 404


async def test_issue_comments_paginate_through_githubkit(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    ids = [fake.add_issue_comment(REPO, NUMBER, f"Comment {i}.") for i in range(5)]

    second = await github.rest.issues.async_list_comments(OWNER, NAME, NUMBER, per_page=2, page=2)
    listed: list[Any] = second.parsed_data
    pages: Paginator[IssueComment] = github.rest.paginate(
        github.rest.issues.async_list_comments,
        owner=OWNER,
        repo=NAME,
        issue_number=NUMBER,
        per_page=2,
    )
    every = [comment async for comment in pages]

    assert [c.id for c in listed] == ids[2:4]
    assert 'rel="next"' in second.headers["link"]
    assert [c.body for c in every] == [f"Comment {i}." for i in range(5)]
    calls = fake.requests_to("GET", rf"/repos/{REPO}/issues/{NUMBER}/comments")
    assert [r.query.get("page", "1") for r in calls] == ["2", "1", "2", "3"]


async def test_an_edit_changes_updated_at_and_only_the_apps_own_comments_may_be_edited(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    persons = fake.add_issue_comment(REPO, NUMBER, "/tiebreak review", author="alice")
    created = await github.rest.issues.async_create_comment(OWNER, NAME, NUMBER, body="Reviewing.")
    # GitHub's times have seconds: a later clock rather than a test that sleeps.
    monkeypatch.setattr(github_api, "_now", lambda: "2099-01-01T00:00:00Z")

    edited = await github.rest.issues.async_update_comment(
        OWNER, NAME, created.parsed_data.id, body="Reviewed."
    )
    with pytest.raises(RequestFailed) as exc:
        await github.rest.issues.async_update_comment(OWNER, NAME, persons, body="Hijacked.")

    assert edited.parsed_data.created_at == created.parsed_data.created_at
    assert edited.parsed_data.updated_at == datetime(2099, 1, 1, tzinfo=UTC)
    assert failure(exc) == (403, {**failure(exc)[1], "message": NOT_ACCESSIBLE})
    assert [c.body for c in fake.issue_comments(REPO, NUMBER)] == [
        "/tiebreak review",
        "Reviewed.",
    ]


# -- reactions --------------------------------------------------------------------------------


async def test_a_reaction_is_201_then_200_when_the_app_already_made_it(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    command = fake.add_issue_comment(REPO, NUMBER, "/tiebreak apply", author="alice")

    first = await github.rest.reactions.async_create_for_issue_comment(
        OWNER, NAME, command, content="eyes"
    )
    again = await github.rest.reactions.async_create_for_issue_comment(
        OWNER, NAME, command, content="eyes"
    )
    other = await github.rest.reactions.async_create_for_issue_comment(
        OWNER, NAME, command, content="+1"
    )
    read = await github.rest.issues.async_get_comment(OWNER, NAME, command)

    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert first.parsed_data.content == "eyes"
    assert again.parsed_data.id == first.parsed_data.id
    assert first.parsed_data.user is not None
    assert first.parsed_data.user.login == "tiebreak[bot]"
    assert fake.reactions(REPO, command) == ["eyes", "+1"]
    rollup = payload(read)["reactions"]
    assert (rollup["total_count"], rollup["eyes"], rollup["+1"], rollup["heart"]) == (2, 1, 1, 0)


async def test_a_reaction_to_a_review_comment_goes_to_the_pulls_endpoint(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    finding = fake.add_review_comment(REPO, NUMBER, "app.py", 3, "Is this right?", author="bob")
    issue_comment = fake.add_issue_comment(REPO, NUMBER, "Thanks.")

    reacted = await github.rest.reactions.async_create_for_pull_request_review_comment(
        OWNER, NAME, finding, content="rocket"
    )
    with pytest.raises(RequestFailed) as wrong_kind:
        await github.rest.reactions.async_create_for_issue_comment(
            OWNER, NAME, finding, content="rocket"
        )
    with pytest.raises(RequestFailed) as other_kind:
        await github.rest.reactions.async_create_for_pull_request_review_comment(
            OWNER, NAME, issue_comment, content="rocket"
        )

    assert reacted.status_code == 201
    assert failure(wrong_kind)[0] == failure(other_kind)[0] == 404
    assert fake.reactions(REPO, finding) == ["rocket"]
    assert fake.reactions(REPO, issue_comment) == []


async def test_a_persons_reaction_counts_in_the_comments_rollup(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    review = await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        event="COMMENT",
        comments=[{"path": "app.py", "line": 22, "side": "RIGHT", "body": "y changed."}],
    )
    ((comment,),) = [review.comments for review in fake.reviews(REPO, NUMBER)]
    thanks = fake.add_issue_comment(REPO, NUMBER, "Thanks.")

    first = fake.add_reaction(REPO, comment.id, "-1", user="alice")
    again = fake.add_reaction(REPO, comment.id, "-1", user="alice")
    fake.add_reaction(REPO, comment.id, "-1", user="bob")
    fake.add_reaction(REPO, thanks, "heart", user="tiebreak[bot]", user_type="Bot")
    listed: list[Any] = (
        await github.rest.pulls.async_list_review_comments(OWNER, NAME, NUMBER)
    ).parsed_data
    read = await github.rest.pulls.async_get_review_comment(OWNER, NAME, comment.id)
    conversation = await github.rest.issues.async_get_comment(OWNER, NAME, thanks)

    assert review.status_code == 200
    assert again == first  # the same person's same reaction is one reaction
    (rollup,) = [c.reactions for c in listed]
    assert (rollup.minus_one, rollup.plus_one, rollup.total_count) == (2, 0, 2)
    assert payload(read)["reactions"]["-1"] == 2
    assert payload(conversation)["reactions"]["heart"] == 1
    assert fake.reactions(REPO, comment.id) == ["-1", "-1"]
    with pytest.raises(ValueError, match="not one of"):
        fake.add_reaction(REPO, thanks, "thumbsdown")
    with pytest.raises(KeyError):
        fake.add_reaction(REPO, 999_999, "-1")


async def test_an_unknown_reaction_is_refused(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    unchecked: GitHub[AppInstallationAuthStrategy],
) -> None:
    command = fake.add_issue_comment(REPO, NUMBER, "/tiebreak help")

    # githubkit refuses it before sending...
    with pytest.raises(pydantic.ValidationError):
        await github.rest.reactions.async_create_for_issue_comment(
            OWNER, NAME, command, content=cast(Any, "thumbsup")
        )
    # ...and GitHub refuses it too.
    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.reactions.async_create_for_issue_comment(
            OWNER, NAME, command, content=cast(Any, "thumbsup")
        )

    assert failure(exc)[0] == 422
    assert fake.reactions(REPO, command) == []


# -- review comments and replies --------------------------------------------------------------


async def test_a_reply_joins_the_thread_of_a_reviews_comment(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        body="One finding.",
        event="COMMENT",
        comments=[{"path": "app.py", "line": 22, "side": "RIGHT", "body": "y changed."}],
    )
    ((finding,),) = [review.comments for review in fake.reviews(REPO, NUMBER)]

    reply = await github.rest.pulls.async_create_reply_for_review_comment(
        OWNER, NAME, NUMBER, finding.id, body="The arbiter agrees."
    )
    root = await github.rest.pulls.async_get_review_comment(OWNER, NAME, finding.id)

    assert reply.status_code == 201
    data = reply.parsed_data
    assert (data.in_reply_to_id, data.path, data.line, data.side) == (
        finding.id,
        "app.py",
        22,
        "RIGHT",
    )
    assert data.user is not None
    assert data.user.login == "tiebreak[bot]"
    assert data.html_url == f"https://github.com/{REPO}/pull/{NUMBER}#discussion_r{data.id}"
    assert root.parsed_data.body == "y changed."
    assert root.parsed_data.pull_request_review_id == fake.reviews(REPO, NUMBER)[0].id
    assert (
        root.parsed_data.diff_hunk
        == "@@ -20,3 +21,3 @@ def main():\n     x = 1\n-    y = 2\n+    y = 3"
    )
    assert not root.parsed_data.in_reply_to_id
    thread = fake.review_comments(REPO, NUMBER)
    assert [(c.body, c.in_reply_to, c.author) for c in thread] == [
        ("y changed.", None, "tiebreak[bot]"),
        ("The arbiter agrees.", finding.id, "tiebreak[bot]"),
    ]
    # A reply is no review of its own in the fake (see the module docstring).
    assert len(fake.reviews(REPO, NUMBER)) == 1


async def test_a_persons_review_comment_and_reply_are_read_as_github_has_them(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.set_permission(REPO, "alice", "write")
    finding = fake.add_review_comment(REPO, NUMBER, "app.py", 2, "Why sys?", author="alice")
    answer = fake.add_review_comment(
        REPO, NUMBER, "app.py", 2, "/tiebreak arbitrate", author="bob", in_reply_to=finding
    )
    nested = fake.add_review_comment(
        REPO, NUMBER, "app.py", 2, "Also this.", author="carol", in_reply_to=answer
    )

    read = await github.rest.pulls.async_get_review_comment(OWNER, NAME, answer)
    listed: list[Any] = (
        await github.rest.pulls.async_list_review_comments(OWNER, NAME, NUMBER)
    ).parsed_data

    data = read.parsed_data
    assert (data.in_reply_to_id, data.body, data.path, data.line) == (
        finding,
        "/tiebreak arbitrate",
        "app.py",
        2,
    )
    assert data.user is not None
    assert (data.user.login, data.author_association) == ("bob", "NONE")
    assert [(c.id, c.in_reply_to_id or None) for c in listed] == [
        (finding, None),
        (answer, finding),
        (nested, finding),  # a reply to a reply joins the thread's first comment
    ]
    assert listed[0].author_association == "COLLABORATOR"
    with pytest.raises(ValueError, match="not a line of"):
        fake.add_review_comment(REPO, NUMBER, "app.py", 12, "Between hunks.")


async def test_a_reply_must_answer_a_thread_of_that_pull_request(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(REPO, 8, head_sha="e" * 40, base_sha=BASE, diff=DIFF)
    finding = fake.add_review_comment(REPO, NUMBER, "new.txt", 1, "Greeting?")
    reply = fake.add_review_comment(REPO, NUMBER, "new.txt", 1, "Yes.", in_reply_to=finding)

    with pytest.raises(RequestFailed) as to_reply:
        await github.rest.pulls.async_create_reply_for_review_comment(
            OWNER, NAME, NUMBER, reply, body="Noted."
        )
    with pytest.raises(RequestFailed) as other_pull:
        await github.rest.pulls.async_create_reply_for_review_comment(
            OWNER, NAME, 8, finding, body="Noted."
        )
    with pytest.raises(RequestFailed) as unknown:
        await github.rest.pulls.async_get_review_comment(OWNER, NAME, 999_999)

    assert failure(to_reply)[0] == 422
    assert failure(to_reply)[1]["errors"] == [REPLY_TO_REPLY]
    assert failure(other_pull)[0] == failure(unknown)[0] == 404
    assert len(fake.review_comments(REPO, NUMBER)) == 2


# -- GraphQL: review threads ------------------------------------------------------------------

THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          isResolved
          comments(first: 1) { nodes { databaseId } }
        }
      }
    }
  }
}
"""
THREADS_OF_PULL = {"owner": OWNER, "name": NAME, "number": NUMBER}


def thread_nodes(data: dict[str, Any]) -> list[tuple[bool, list[int]]]:
    """(isResolved, the comments' databaseIds) of each thread of a reviewThreads answer."""
    nodes = data["repository"]["pullRequest"]["reviewThreads"]["nodes"]
    return [(n["isResolved"], [c["databaseId"] for c in n["comments"]["nodes"]]) for n in nodes]


async def test_review_threads_and_whether_they_are_resolved_come_through_githubkits_graphql(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        event="COMMENT",
        comments=[
            {"path": "app.py", "line": 22, "side": "RIGHT", "body": "y changed."},
            {"path": "new.txt", "line": 1, "body": "A greeting?"},
        ],
    )
    ((first, second),) = [review.comments for review in fake.reviews(REPO, NUMBER)]
    persons = fake.add_review_comment(REPO, NUMBER, "app.py", 2, "Why sys?", author="alice")
    reply = fake.add_review_comment(
        REPO, NUMBER, "new.txt", 1, "Yes.", author="alice", in_reply_to=second.id
    )
    fake.resolve_thread(REPO, NUMBER, reply)  # the reply's thread: the second finding's
    fake.resolve_thread(REPO, NUMBER, persons)
    fake.resolve_thread(REPO, NUMBER, persons, resolved=False)

    data = await github.async_graphql(THREADS_QUERY, {**THREADS_OF_PULL, "cursor": None})
    asked_for_two = await github.async_graphql(
        THREADS_QUERY.replace("comments(first: 1)", "comments(first: 2)"), THREADS_OF_PULL
    )

    assert thread_nodes(data) == [
        (False, [first.id]),
        (True, [second.id]),
        (False, [persons]),
    ]
    page_info = data["repository"]["pullRequest"]["reviewThreads"]["pageInfo"]
    assert page_info["hasNextPage"] is False
    assert isinstance(page_info["endCursor"], str)
    assert thread_nodes(asked_for_two)[1] == (True, [second.id, reply])
    assert fake.thread_resolved(REPO, NUMBER, second.id)
    assert fake.thread_resolved(REPO, NUMBER, reply)
    assert not fake.thread_resolved(REPO, NUMBER, persons)
    (call, _) = fake.requests_to("POST", "/graphql")
    assert call.headers["authorization"] == f"token {fake.issued_tokens[0]}"
    assert call.body == {"query": THREADS_QUERY, "variables": {**THREADS_OF_PULL, "cursor": None}}
    with pytest.raises(KeyError):
        fake.resolve_thread(REPO, NUMBER, 999_999)


async def test_review_threads_come_in_pages_after_opaque_cursors(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    threads = [
        fake.add_review_comment(REPO, NUMBER, "app.py", line, f"Line {line}?")
        for line in (1, 2, 3, 4, 5)
    ]
    query = THREADS_QUERY.replace("first: 100", "first: 2")

    pages = [page async for page in github.graphql.paginate(query, THREADS_OF_PULL)]

    assert [[ids for _, ids in thread_nodes(page)] for page in pages] == [
        [[threads[0]], [threads[1]]],
        [[threads[2]], [threads[3]]],
        [[threads[4]]],
    ]
    infos = [page["repository"]["pullRequest"]["reviewThreads"]["pageInfo"] for page in pages]
    assert [info["hasNextPage"] for info in infos] == [True, True, False]
    cursors = [r.body["variables"].get("cursor") for r in fake.requests_to("POST", "/graphql")]
    assert cursors == [None, infos[0]["endCursor"], infos[1]["endCursor"]]
    assert all(isinstance(info["endCursor"], str) for info in infos)


async def test_review_threads_of_a_repository_or_pull_request_not_found_are_graphql_errors(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(OTHER_REPO, 1, head_sha="9" * 40, base_sha="8" * 40)

    async def errors(variables: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
        with pytest.raises(GraphQLFailed) as exc:
            await github.async_graphql(THREADS_QUERY, variables)
        response = exc.value.response
        assert response.errors is not None
        return response.data, [e.model_dump(exclude_none=True) for e in response.errors]

    # Another installation's repository is hidden, as one that does not exist.
    other = {"owner": "acme", "name": "elsewhere", "number": 1}
    assert await errors(other) == (
        {"repository": None},
        [
            {
                "type": "NOT_FOUND",
                "path": ["repository"],
                "locations": [{"line": 3, "column": 3}],
                "message": "Could not resolve to a Repository with the name 'acme/elsewhere'.",
            }
        ],
    )
    missing = await errors({**THREADS_OF_PULL, "number": 404})
    assert missing[0] == {"repository": {"pullRequest": None}}
    assert [(e["type"], e["path"], e["message"]) for e in missing[1]] == [
        (
            "NOT_FOUND",
            ["repository", "pullRequest"],
            "Could not resolve to a PullRequest with the number of 404.",
        )
    ]
    bad_cursor = await errors({**THREADS_OF_PULL, "cursor": "not a cursor"})
    assert [e["type"] for e in bad_cursor[1]] == ["INVALID_CURSOR_ARGUMENTS"]
    no_number = await errors({"owner": OWNER, "name": NAME})
    assert [e["message"] for e in no_number[1]] == [
        "Variable $number of type Int! was provided invalid value"
    ]
    assert fake.problems == []


@pytest.mark.parametrize(
    ("threads", "error"),
    [
        ("reviewThreads(first: 101, after: $cursor)", "EXCESSIVE_PAGINATION"),
        ("reviewThreads(after: $cursor)", "MISSING_PAGINATION_BOUNDARIES"),
    ],
)
async def test_a_page_of_review_threads_is_asked_for_and_at_most_100(
    github: GitHub[AppInstallationAuthStrategy], threads: str, error: str
) -> None:
    query = THREADS_QUERY.replace("reviewThreads(first: 100, after: $cursor)", threads)

    with pytest.raises(GraphQLFailed) as exc:
        await github.async_graphql(query, THREADS_OF_PULL)

    assert [e.type for e in exc.value.response.errors or []] == [error]


async def test_graphql_wants_a_valid_installation_token(
    fake: FakeGitHub, plain: httpx.AsyncClient
) -> None:
    body = {"query": THREADS_QUERY, "variables": THREADS_OF_PULL}

    anonymous = await plain.post("/graphql", json=body)
    unknown = await plain.post(
        "/graphql", json=body, headers={"Authorization": "bearer ghs_not_issued"}
    )
    token = fake.issue_token(INSTALLATION)
    valid = await plain.post("/graphql", json=body, headers={"Authorization": f"bearer {token}"})

    assert anonymous.status_code == unknown.status_code == 401
    assert unknown.json()["message"] == "Bad credentials"
    assert valid.status_code == 200
    assert valid.json() == {
        "data": {
            "repository": {
                "pullRequest": {
                    "reviewThreads": {
                        "pageInfo": {"hasNextPage": False, "endCursor": None},
                        "nodes": [],
                    }
                }
            }
        }
    }


async def test_a_graphql_query_the_fake_does_not_know_is_an_error_and_a_problem(
    app_key: AppKey,
) -> None:
    fake = FakeGitHub(app_id=APP_ID, public_key_pem=app_key.public_pem).start()
    try:
        fake.add_installation(INSTALLATION, repos=[REPO])
        async with installation_client(fake, app_key) as github:
            with pytest.raises(GraphQLFailed) as exc:
                await github.async_graphql("query { viewer { login } }")
    finally:
        fake.stop()

    errors = exc.value.response.errors or []
    assert [e.message for e in errors] == [GRAPHQL_UNSUPPORTED]
    (problem,) = fake.problems
    assert "viewer { login }" in problem
    with pytest.raises(FakeGitHubError, match="answers only the reviewThreads query"):
        fake.__exit__(None, None, None)


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


# -- git data ---------------------------------------------------------------------------------

CALC_NUMBER = 20
CALC_HEAD = "c0ffee" + "0" * 34
CALC_BASE_FILES = {"calc.py": "def add(a, b):\n    return a - b\n", "docs/README.md": "# Calc\n"}
CALC_HEAD_FILES = {"calc.py": "def add(a, b):\n    return a + b\n", "docs/README.md": "# Calc\n"}
CALC_DIFF = """\
diff --git a/calc.py b/calc.py
index 1111111..2222222 100644
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def add_calc_pull(fake: FakeGitHub, **overrides: Any) -> None:
    fields: dict[str, Any] = {
        "head_sha": CALC_HEAD,
        "base_sha": BASE,
        "head_ref": "fix-calc",
        "diff": CALC_DIFF,
        "base_files": CALC_BASE_FILES,
        "head_files": CALC_HEAD_FILES,
    }
    fake.add_pull(REPO, CALC_NUMBER, **(fields | overrides))


async def test_a_pull_requests_branches_and_commits_hold_its_files(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)

    ref = await github.rest.git.async_get_ref(OWNER, NAME, "heads/fix-calc")
    commit = await github.rest.git.async_get_commit(OWNER, NAME, CALC_HEAD)
    tree = await github.rest.git.async_get_tree(
        OWNER, NAME, commit.parsed_data.tree.sha, recursive="1"
    )
    calc = next(item for item in tree.parsed_data.tree if item.path == "calc.py")
    blob = await github.rest.git.async_get_blob(OWNER, NAME, calc.sha)
    at_base = await github.rest.repos.async_get_content(OWNER, NAME, "calc.py", ref="main")
    at_head = await github.rest.repos.async_get_content(OWNER, NAME, "calc.py", ref="fix-calc")

    assert ref.parsed_data.ref == "refs/heads/fix-calc"
    assert (ref.parsed_data.object_.type, ref.parsed_data.object_.sha) == ("commit", CALC_HEAD)
    assert [p.sha for p in commit.parsed_data.parents] == [BASE]
    assert [(i.path, i.type, i.mode) for i in tree.parsed_data.tree] == [
        ("calc.py", "blob", "100644"),
        ("docs", "tree", "040000"),
        ("docs/README.md", "blob", "100644"),
    ]
    assert tree.parsed_data.truncated is False
    assert base64.b64decode(blob.parsed_data.content).decode() == CALC_HEAD_FILES["calc.py"]
    assert blob.parsed_data.size == len(CALC_HEAD_FILES["calc.py"])
    assert base64.b64decode(payload(at_base)["content"]).decode() == CALC_BASE_FILES["calc.py"]
    assert payload(at_head)["sha"] == calc.sha
    assert fake.branch_files(REPO, "fix-calc") == CALC_HEAD_FILES
    assert fake.branch_files(REPO, "main") == CALC_BASE_FILES
    assert fake.commit(REPO, CALC_HEAD).parents == (BASE,)


async def test_a_tree_lists_one_level_unless_asked_to_recurse(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)

    by_branch = await github.rest.git.async_get_tree(OWNER, NAME, "fix-calc")
    docs = next(item for item in by_branch.parsed_data.tree if item.path == "docs")
    inside = await github.rest.git.async_get_tree(OWNER, NAME, docs.sha)

    assert [(i.path, i.type) for i in by_branch.parsed_data.tree] == [
        ("calc.py", "blob"),
        ("docs", "tree"),
    ]
    assert [i.path for i in inside.parsed_data.tree] == ["README.md"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_blob_tree_and_commit_shas_are_gits_own(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy], tmp_path: Path
) -> None:
    add_calc_pull(fake)
    # githubkit takes the date as a datetime and sends it as ISO 8601.
    when = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)

    tree = await github.rest.git.async_get_tree(OWNER, NAME, "fix-calc")
    commit = await github.rest.git.async_create_commit(
        OWNER,
        NAME,
        message="Fix add\n",
        tree=tree.parsed_data.sha,
        parents=[CALC_HEAD],
        author={"name": "Ada", "email": "ada@example.com", "date": when},
        committer={"name": "Ada", "email": "ada@example.com", "date": when},
    )

    def git(*args: str, stdin: str = "") -> str:
        return subprocess.run(
            ["git", *args], cwd=tmp_path, input=stdin, capture_output=True, text=True, check=True
        ).stdout.strip()

    git("init", "-q")
    blobs = {p: git("hash-object", "-w", "--stdin", stdin=t) for p, t in CALC_HEAD_FILES.items()}
    docs = git("mktree", stdin=f"100644 blob {blobs['docs/README.md']}\tREADME.md\n")
    root = git(
        "mktree", stdin=f"100644 blob {blobs['calc.py']}\tcalc.py\n040000 tree {docs}\tdocs\n"
    )
    # Hashed rather than made with commit-tree, which would want the parent object itself.
    expected = git(
        "hash-object",
        "-t",
        "commit",
        "--stdin",
        stdin=(
            f"tree {root}\nparent {CALC_HEAD}\n"
            "author Ada <ada@example.com> 1770091506 +0000\n"
            "committer Ada <ada@example.com> 1770091506 +0000\n\nFix add\n"
        ),
    )

    assert tree.parsed_data.sha == root
    assert {i.path: i.sha for i in tree.parsed_data.tree if i.type == "blob"} == {
        "calc.py": blobs["calc.py"]
    }
    assert commit.parsed_data.sha == expected
    assert commit.parsed_data.author.date.isoformat() == "2026-02-03T04:05:06+00:00"


async def test_a_fix_is_committed_on_the_head_branch_and_moves_the_pull_request(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)
    fixed = "def add(a, b):\n    return b + a\n"

    head = await github.rest.git.async_get_commit(OWNER, NAME, CALC_HEAD)
    blob = await github.rest.git.async_create_blob(
        OWNER, NAME, content=base64.b64encode(fixed.encode()).decode(), encoding="base64"
    )
    tree = await github.rest.git.async_create_tree(
        OWNER,
        NAME,
        base_tree=head.parsed_data.tree.sha,
        tree=[
            {"path": "calc.py", "mode": "100644", "type": "blob", "sha": blob.parsed_data.sha},
            {"path": "docs/README.md", "mode": "100644", "type": "blob", "sha": None},
            {"path": "NOTES.md", "mode": "100644", "type": "blob", "content": "Applied.\n"},
        ],
    )
    commit = await github.rest.git.async_create_commit(
        OWNER,
        NAME,
        message="Apply Tiebreak's fixes",
        tree=tree.parsed_data.sha,
        parents=[CALC_HEAD],
    )
    updated = await github.rest.git.async_update_ref(
        OWNER, NAME, "heads/fix-calc", sha=commit.parsed_data.sha
    )
    pull = await github.rest.pulls.async_get(OWNER, NAME, CALC_NUMBER)

    assert (blob.status_code, tree.status_code, commit.status_code) == (201, 201, 201)
    assert [(i.path, i.type) for i in tree.parsed_data.tree] == [
        ("NOTES.md", "blob"),
        ("calc.py", "blob"),
    ]
    assert commit.parsed_data.author.name == "tiebreak[bot]"
    assert [p.sha for p in commit.parsed_data.parents] == [CALC_HEAD]
    assert updated.status_code == 200
    assert updated.parsed_data.object_.sha == commit.parsed_data.sha
    assert fake.branch_files(REPO, "fix-calc") == {"calc.py": fixed, "NOTES.md": "Applied.\n"}
    assert fake.commit(REPO, commit.parsed_data.sha).message == "Apply Tiebreak's fixes"
    assert fake.branch_files(REPO, "main") == CALC_BASE_FILES
    (update,) = fake.ref_updates(REPO)
    assert (update.ref, update.before, update.after) == (
        "refs/heads/fix-calc",
        CALC_HEAD,
        commit.parsed_data.sha,
    )
    assert (update.force, update.accepted) == (False, True)
    # A branch that moves moves the pull request, as a push does.
    assert payload(pull)["head"]["sha"] == commit.parsed_data.sha
    check = await github.rest.checks.async_create(
        OWNER, NAME, name="Tiebreak", head_sha=commit.parsed_data.sha
    )
    assert check.status_code == 201


async def test_a_ref_update_that_is_not_a_fast_forward_is_422_unless_forced(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)
    base = await github.rest.git.async_get_commit(OWNER, NAME, BASE)
    # A commit on the base, beside the head rather than on top of it.
    beside = await github.rest.git.async_create_commit(
        OWNER, NAME, message="Elsewhere", tree=base.parsed_data.tree.sha, parents=[BASE]
    )
    sha = beside.parsed_data.sha

    with pytest.raises(RequestFailed) as exc:
        await github.rest.git.async_update_ref(OWNER, NAME, "heads/fix-calc", sha=sha, force=False)
    unchanged = fake.branch_sha(REPO, "fix-calc")
    forced = await github.rest.git.async_update_ref(
        OWNER, NAME, "heads/fix-calc", sha=sha, force=True
    )

    assert failure(exc)[0] == 422
    assert failure(exc)[1]["message"] == NOT_FAST_FORWARD
    assert unchanged == CALC_HEAD
    assert forced.status_code == 200
    assert [(u.force, u.accepted) for u in fake.ref_updates(REPO)] == [(False, False), (True, True)]


async def test_git_objects_the_repository_lacks_are_refused(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    unchecked: GitHub[AppInstallationAuthStrategy],
) -> None:
    add_calc_pull(fake)
    missing = "f" * 40
    head_tree = (await github.rest.git.async_get_commit(OWNER, NAME, CALC_HEAD)).parsed_data.tree

    async def status(call: Any) -> tuple[int, str]:
        with pytest.raises(RequestFailed) as exc:
            await call
        return failure(exc)[0], failure(exc)[1]["message"]

    git = github.rest.git
    assert await status(git.async_get_commit(OWNER, NAME, missing)) == (404, "Not Found")
    assert await status(git.async_get_blob(OWNER, NAME, missing)) == (404, "Not Found")
    assert await status(git.async_get_tree(OWNER, NAME, missing)) == (404, "Not Found")
    assert await status(git.async_get_ref(OWNER, NAME, "heads/nope")) == (404, "Not Found")
    assert await status(git.async_update_ref(OWNER, NAME, "heads/nope", sha=CALC_HEAD)) == (
        422,
        REF_MISSING,
    )
    assert await status(git.async_update_ref(OWNER, NAME, "heads/fix-calc", sha=missing)) == (
        422,
        OBJECT_MISSING,
    )
    no_tree = git.async_create_commit(OWNER, NAME, message="m", tree=missing, parents=[])
    assert (await status(no_tree))[0] == 422
    no_parent = git.async_create_commit(
        OWNER, NAME, message="m", tree=head_tree.sha, parents=[missing]
    )
    assert (await status(no_parent))[0] == 422
    gone = [{"path": "nope.py", "mode": "100644", "type": "blob", "sha": None}]
    no_path = git.async_create_tree(OWNER, NAME, base_tree=head_tree.sha, tree=cast(Any, gone))
    assert (await status(no_path))[0] == 422
    both = [{"path": "a.py", "mode": "100644", "type": "blob", "sha": missing, "content": "x"}]
    no_choice = unchecked.rest.git.async_create_tree(OWNER, NAME, tree=cast(Any, both))
    assert (await status(no_choice))[0] == 422
    assert [u.accepted for u in fake.ref_updates(REPO)] == [False]


async def test_a_push_puts_a_new_head_on_top_of_the_previous_one(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)
    newer = "c0ffee" + "1" * 34
    add_calc_pull(fake, head_sha=newer, base_files=None, head_files=None)

    ref = await github.rest.git.async_get_ref(OWNER, NAME, "heads/fix-calc")

    assert ref.parsed_data.object_.sha == newer
    assert fake.commit(REPO, newer).parents == (CALC_HEAD,)
    assert fake.branch_files(REPO, "fix-calc") == CALC_HEAD_FILES  # no files given: the parent's


def test_files_set_on_a_branch_before_its_pull_request_go_with_the_branch(
    fake: FakeGitHub,
) -> None:
    fake.set_file("octo/gadgets", "main", "README.md", "# Gadgets\n")
    fake.set_file("octo/gadgets", "topic", "new.py", "x = 1\n")

    fake.add_pull("octo/gadgets", 1, head_sha="c" * 40, base_sha="d" * 40, head_ref="topic")

    assert fake.commit("octo/gadgets", "d" * 40).files == {"README.md": "# Gadgets\n"}
    assert fake.branch_sha("octo/gadgets", "topic") == "c" * 40
    assert fake.branch_files("octo/gadgets", "topic") == {
        "README.md": "# Gadgets\n",
        "new.py": "x = 1\n",
    }


# -- comparing commits ----------------------------------------------------------------------

PUSHED = "c0ffee" + "1" * 34
PUSHED_FILES = {
    "calc.py": "def add(a, b):\n    return a + b  # fixed\n",
    "docs/README.md": "# Calc\n\nAdds.\n",
}
REBASED = "c0ffee" + "2" * 34
REBASED_FILES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "calc_test.py": "assert add(1, 2) == 3",
}


def push_then_force_push(fake: FakeGitHub) -> None:
    """The calc pull request, pushed to once, then rebased onto its base and force-pushed."""
    add_calc_pull(fake)
    add_calc_pull(fake, head_sha=PUSHED, head_files=PUSHED_FILES)
    add_calc_pull(fake, head_sha=REBASED, head_files=REBASED_FILES, parent=BASE)


async def test_a_push_is_ahead_of_the_previous_head_and_a_force_push_diverges_from_it(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)
    add_calc_pull(fake, head_sha=PUSHED, head_files=PUSHED_FILES)

    pushed = (
        await github.rest.repos.async_compare_commits(OWNER, NAME, f"{CALC_HEAD}...{PUSHED}")
    ).parsed_data
    add_calc_pull(fake, head_sha=REBASED, head_files=REBASED_FILES, parent=BASE)
    rebased = (
        await github.rest.repos.async_compare_commits(OWNER, NAME, f"{PUSHED}...{REBASED}")
    ).parsed_data

    assert (pushed.status, pushed.ahead_by, pushed.behind_by, pushed.total_commits) == (
        "ahead",
        1,
        0,
        1,
    )
    assert [c.sha for c in pushed.commits] == [PUSHED]
    assert pushed.merge_base_commit.sha == pushed.base_commit.sha == CALC_HEAD
    author = pushed.commits[0].author
    assert isinstance(author, SimpleUser)
    assert author.login == "octocat"  # the noreply address of a commit the test set up
    assert [p.sha for p in pushed.commits[0].parents] == [CALC_HEAD]
    assert [(f.filename, f.status) for f in pushed.files or []] == [
        ("calc.py", "modified"),
        ("docs/README.md", "modified"),
    ]
    assert (rebased.status, rebased.ahead_by, rebased.behind_by) == ("diverged", 1, 2)
    assert [c.sha for c in rebased.commits] == [REBASED]
    assert rebased.merge_base_commit.sha == BASE
    assert rebased.base_commit.sha == PUSHED
    # The old heads are kept, as GitHub keeps them, but the new one no longer descends from them.
    assert fake.commit(REPO, REBASED).parents == (BASE,)
    assert fake.commit(REPO, PUSHED).parents == (CALC_HEAD,)
    assert fake.branch_sha(REPO, "fix-calc") == REBASED


async def test_compared_files_are_the_heads_changes_since_the_merge_base(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    push_then_force_push(fake)

    compared = await github.rest.repos.async_compare_commits(OWNER, NAME, f"{PUSHED}...{REBASED}")

    # From the merge base (BASE) to the head: the pushed head's README edit is not among them.
    files = payload(compared)["files"]
    assert [(f["filename"], f["status"], f["additions"], f["deletions"]) for f in files] == [
        ("calc.py", "modified", 1, 1),
        ("calc_test.py", "added", 1, 0),
        ("docs/README.md", "removed", 0, 1),
    ]
    assert [f["patch"] for f in files] == [
        "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b",
        "@@ -0,0 +1 @@\n+assert add(1, 2) == 3\n\\ No newline at end of file",
        "@@ -1 +0,0 @@\n-# Calc",
    ]
    assert files[0]["changes"] == 2
    assert files[1]["sha"] == hashlib.sha1(b"blob 21\0assert add(1, 2) == 3").hexdigest()
    assert files[1]["contents_url"] == (
        f"{fake.base_url}/repos/{REPO}/contents/calc_test.py?ref={REBASED}"
    )


@pytest.mark.parametrize(
    ("basehead", "status", "ahead_by", "behind_by"),
    [
        (f"{REBASED}...{BASE}", "behind", 0, 1),
        ("main...fix-calc", "ahead", 1, 0),
        (f"{BASE}..fix-calc", "ahead", 1, 0),  # two dots: still from the merge base
        ("fix-calc...fix-calc", "identical", 0, 0),
        (f"{CALC_HEAD}...{PUSHED}", "ahead", 1, 0),
        (f"{CALC_HEAD}...{REBASED}", "diverged", 1, 1),
    ],
)
async def test_a_comparison_names_commits_or_branches(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    basehead: str,
    status: str,
    ahead_by: int,
    behind_by: int,
) -> None:
    push_then_force_push(fake)

    compared = (await github.rest.repos.async_compare_commits(OWNER, NAME, basehead)).parsed_data

    assert (compared.status, compared.ahead_by, compared.behind_by) == (
        status,
        ahead_by,
        behind_by,
    )
    assert compared.total_commits == len(compared.commits) == ahead_by


async def test_comparing_a_commit_the_repository_lacks_is_404(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    push_then_force_push(fake)
    fake.set_file(REPO, "d" * 40, "elsewhere.txt", "An unrelated history.\n")

    async def refused(basehead: str) -> tuple[int, str]:
        with pytest.raises(RequestFailed) as exc:
            await github.rest.repos.async_compare_commits(OWNER, NAME, basehead)
        return failure(exc)[0], failure(exc)[1]["message"]

    assert await refused(f"{BASE}...{'f' * 40}") == (404, "Not Found")
    assert await refused(f"nope...{REBASED}") == (404, "Not Found")
    assert await refused(f"{BASE}...{REBASED[:7]}") == (404, "Not Found")  # no short SHAs
    assert await refused(f"{BASE}{REBASED}") == (404, "Not Found")
    assert await refused(f"main...{'d' * 40}") == (
        404,
        f"No common ancestor between main and {'d' * 40}.",
    )
    with pytest.raises(KeyError, match="no commit"):
        add_calc_pull(fake, head_sha="9" * 40, parent="f" * 40)


# -- forks ------------------------------------------------------------------------------------

FORK = "mallory/widgets"


async def commit_on_fork(github: GitHub[AppInstallationAuthStrategy]) -> str:
    """A commit on top of the fork's head, made through the base repository's token."""
    head = await github.rest.git.async_get_commit("mallory", "widgets", CALC_HEAD)
    tree = await github.rest.git.async_create_tree(
        "mallory",
        "widgets",
        base_tree=head.parsed_data.tree.sha,
        tree=[{"path": "calc.py", "mode": "100644", "type": "blob", "content": "fixed\n"}],
    )
    commit = await github.rest.git.async_create_commit(
        "mallory", "widgets", message="Fix", tree=tree.parsed_data.sha, parents=[CALC_HEAD]
    )
    return commit.parsed_data.sha


async def test_a_forks_head_branch_lives_in_the_fork_and_maintainers_may_push_to_it(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    # The fork's branch is called main too: the base repository's main must not move.
    add_calc_pull(fake, head_repo=FORK, head_ref="main")

    sha = await commit_on_fork(github)
    updated = await github.rest.git.async_update_ref("mallory", "widgets", "heads/main", sha=sha)
    pull = await github.rest.pulls.async_get(OWNER, NAME, CALC_NUMBER)
    with pytest.raises(RequestFailed) as in_base:
        await github.rest.git.async_get_ref(OWNER, NAME, "heads/fix-calc")

    assert updated.status_code == 200
    assert fake.branch_sha(FORK, "main") == sha
    assert fake.branch_files(FORK, "main")["calc.py"] == "fixed\n"
    assert fake.branch_sha(REPO, "main") == BASE
    assert payload(pull)["head"]["sha"] == sha
    assert failure(in_base)[0] == 404
    assert fake.ref_updates(REPO) == []
    assert [u.after for u in fake.ref_updates(FORK)] == [sha]


async def test_a_fork_that_does_not_let_maintainers_modify_it_is_403(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake, head_repo=FORK, maintainer_can_modify=False)

    read = await github.rest.git.async_get_ref("mallory", "widgets", "heads/fix-calc")
    with pytest.raises(RequestFailed) as blob:
        await github.rest.git.async_create_blob("mallory", "widgets", content="x")
    with pytest.raises(RequestFailed) as ref:
        await github.rest.git.async_update_ref(
            "mallory", "widgets", "heads/fix-calc", sha=CALC_HEAD
        )

    assert read.status_code == 200  # reading the fork is fine
    assert failure(blob) == (403, {**failure(blob)[1], "message": NOT_ACCESSIBLE})
    assert failure(ref)[0] == 403
    assert fake.ref_updates(FORK) == []


async def test_only_the_pull_requests_head_branch_of_a_fork_is_writable(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake, head_repo=FORK)
    fake.set_file(FORK, "other", "x.py", "x\n")
    fake.add_pull("acme/elsewhere", 1, head_sha="9" * 40, base_sha="8" * 40, head_repo="eve/fork")

    sha = await commit_on_fork(github)
    with pytest.raises(RequestFailed) as other_branch:
        await github.rest.git.async_update_ref("mallory", "widgets", "heads/other", sha=sha)
    with pytest.raises(RequestFailed) as unrelated_fork:
        await github.rest.git.async_get_ref("eve", "fork", "heads/pull-1")

    assert failure(other_branch)[0] == 403
    assert failure(unrelated_fork)[0] == 404  # its pull request is into another installation


# -- fault injection --------------------------------------------------------------------------


async def test_a_failure_can_be_injected_for_the_next_matching_requests(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.fail_next("GET", rf"/repos/{REPO}/pulls/\d+", 502, times=2)

    for _ in range(2):
        with pytest.raises(RequestFailed) as exc:
            await github.rest.pulls.async_get(OWNER, NAME, NUMBER)
        assert failure(exc) == (502, {**failure(exc)[1], "message": "Bad Gateway"})
    third = await github.rest.pulls.async_get(OWNER, NAME, NUMBER)

    assert third.status_code == 200


async def test_a_secondary_rate_limit_reaches_githubkit_with_its_retry_after(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.fail_next(
        "POST",
        r".*/pulls/\d+/reviews",
        403,
        {"message": "You have exceeded a secondary rate limit."},
        {"retry-after": "7"},
    )

    with pytest.raises(SecondaryRateLimitExceeded) as exc:
        await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, body="x", event="COMMENT")

    assert exc.value.retry_after == timedelta(seconds=7)
    assert fake.reviews(REPO, NUMBER) == []


async def test_a_processed_failure_takes_effect_although_the_client_sees_an_error(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.fail_next("POST", r".*/pulls/\d+/reviews", 504, processed=True)

    with pytest.raises(RequestFailed):
        await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, body="x", event="COMMENT")

    assert len(fake.reviews(REPO, NUMBER)) == 1


# -- the server itself ------------------------------------------------------------------------


async def test_a_crashing_handler_answers_500_and_is_a_problem(app_key: AppKey) -> None:
    def boom(*args: Any) -> Any:
        raise RuntimeError("the fake is broken")

    fake = FakeGitHub(app_id=APP_ID, public_key_pem=app_key.public_pem).start()
    try:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF)
        fake._get_pull = boom  # type: ignore[method-assign,assignment]
        async with installation_client(fake, app_key) as github:
            with pytest.raises(RequestFailed) as exc:
                await github.rest.pulls.async_get(OWNER, NAME, NUMBER)
    finally:
        fake.stop()

    assert exc.value.response.status_code == 500
    (problem,) = fake.problems
    assert "RuntimeError: the fake is broken" in problem
    # Strict: leaving the `with` block with a problem noted fails the test.
    with pytest.raises(FakeGitHubError, match="the fake is broken"):
        fake.__exit__(None, None, None)


async def test_an_unknown_route_is_404_json(fake: FakeGitHub, plain: httpx.AsyncClient) -> None:
    token = fake.issue_token(INSTALLATION)

    response = await plain.put(
        f"/repos/{REPO}/issues/{NUMBER}/lock", headers={"Authorization": f"token {token}"}
    )

    assert response.status_code == 404
    assert response.json()["message"] == "Not Found"


async def test_a_body_that_is_not_json_is_400(fake: FakeGitHub, plain: httpx.AsyncClient) -> None:
    token = fake.issue_token(INSTALLATION)

    response = await plain.post(
        f"/repos/{REPO}/labels", content=b"{nope", headers={"Authorization": f"token {token}"}
    )

    assert (response.status_code, response.json()["message"]) == (400, "Problems parsing JSON")


async def test_every_request_is_recorded(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.issues.async_add_labels(OWNER, NAME, NUMBER, labels=["tiebreak"])

    exchange, call = fake.requests
    assert (exchange.method, exchange.status) == ("POST", 201)
    assert (call.method, call.path, call.status) == ("POST", f"/repos/{REPO}/issues/7/labels", 200)
    assert call.body == {"labels": ["tiebreak"]}
    assert call.headers["x-github-api-version"] == "2026-03-10"
    assert call.response[0]["name"] == "tiebreak"


async def test_concurrent_requests_change_state_consistently(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    async def create(i: int) -> int:
        response = await github.rest.checks.async_create(
            OWNER, NAME, name=f"check {i}", head_sha=HEAD
        )
        await github.rest.issues.async_add_labels(OWNER, NAME, NUMBER, labels=[f"label {i}"])
        return int(payload(response)["id"])

    ids = await asyncio.gather(*(create(i) for i in range(20)))

    assert len(set(ids)) == 20
    assert sorted(run.id for run in fake.check_runs(REPO)) == sorted(ids)
    assert sorted(fake.issue_labels(REPO, NUMBER)) == sorted(f"label {i}" for i in range(20))


CHILD = """
import json, sys, urllib.request
base, token = sys.argv[1], sys.argv[2]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
request = urllib.request.Request(
    base + "/repos/octo/widgets/issues/7/labels",
    data=json.dumps({"labels": ["from another process"]}).encode(),
    headers={"Authorization": "token " + token, "Content-Type": "application/json"},
    method="POST",
)
with opener.open(request, timeout=5) as response:
    print(response.status, json.load(response)[0]["name"])
"""


def test_another_process_can_use_the_fake(fake: FakeGitHub) -> None:
    token = fake.issue_token(INSTALLATION)

    child = subprocess.run(
        [sys.executable, "-c", CHILD, fake.base_url, token],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )

    assert child.stdout.strip() == "200 from another process"
    assert fake.issue_labels(REPO, NUMBER) == ["from another process"]


def test_the_base_url_exists_only_while_running(app_key: AppKey) -> None:
    fake = FakeGitHub(app_id=APP_ID, public_key_pem=app_key.public_pem)

    with pytest.raises(RuntimeError):
        _ = fake.base_url
    with fake:
        assert fake.base_url.startswith("http://127.0.0.1:")
    with pytest.raises(RuntimeError):
        _ = fake.base_url


def test_the_diff_lines_follow_githubs_positions(fake: FakeGitHub) -> None:
    lines = fake.diff_lines(REPO, NUMBER, "app.py")

    assert [(d.left, d.right) for d in lines if d.hunk == 1] == [
        (20, 21),
        (21, None),
        (None, 22),
        (22, 23),
    ]
    assert [d.position for d in lines] == [1, 2, 3, 4, 5, 6, 8, 9, 10, 11]
