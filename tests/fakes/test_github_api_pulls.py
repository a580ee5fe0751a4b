"""The fake GitHub's pull requests, their files and the contents API behave as GitHub's."""

import base64
import hashlib

import httpx
import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed
from githubkit.rest import Paginator
from githubkit_schemas.latest.models import DiffEntry

from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_api_kit import (
    APP_PATCH,
    BASE,
    DIFF,
    DIFF_MEDIA,
    HEAD,
    INSTALLATION,
    NAME,
    NUMBER,
    OWNER,
    REPO,
    failure,
    payload,
)

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


async def test_a_deleted_fork_is_gone_and_its_pull_request_names_no_head_repository(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(
        REPO,
        8,
        head_sha="e" * 40,
        base_sha=BASE,
        head_repo="mallory/widgets",
        head_ref="main",
        diff=DIFF,
        head_files={"widgets.py": "FORKED = True\n"},
    )

    await github.rest.repos.async_get_content("mallory", "widgets", "widgets.py", ref="main")

    fake.delete_repo("mallory/widgets")

    pull = payload(await github.rest.pulls.async_get(OWNER, NAME, 8))
    assert pull["head"]["repo"] is None
    assert (pull["head"]["sha"], pull["head"]["ref"]) == ("e" * 40, "main")
    with pytest.raises(RequestFailed) as gone:
        await github.rest.repos.async_get_content("mallory", "widgets", "widgets.py", ref="main")
    assert failure(gone)[0] == 404
    # The base repository keeps the head commit (refs/pull/8/head), not a branch of it.
    kept = await github.rest.repos.async_get_content(OWNER, NAME, "widgets.py", ref="e" * 40)
    assert base64.b64decode(payload(kept)["content"]) == b"FORKED = True\n"
    assert fake.branch_sha(REPO, "main") == BASE


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
