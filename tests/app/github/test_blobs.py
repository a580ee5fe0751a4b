"""Many files' texts read through GitHub's GraphQL API, over real githubkit, against the fake
GitHub: what GitHub receives, and what the reader gets when GitHub fails the query."""

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from app.events import PullKey
from app.github.client import GitHubApp, Installation
from app.github.models import FileAt, PathKind
from tests.fakes.github_api import AppKey, FakeGitHub

REPO, NUMBER, INSTALLATION, APP_ID = "octo/shop", 7, 3, 42
HEAD, BASE = "a" * 40, "b" * 40
REF = PullKey(installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER)
CONTENTS = rf"/repos/{REPO}/contents/.*"
STRANGE = 'docs/say "hi" \\ ") { viewer { login } }\nü 名前.md'
"""A path that would break out of a string, or of the query, were it written into one."""


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE)
        yield fake


def installation(github: FakeGitHub, key: AppKey) -> Installation:
    return GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False).installation(
        INSTALLATION
    )


def graphql_requests(github: FakeGitHub) -> list[Any]:
    return github.requests_to("POST", r"/graphql")


async def test_files_at_two_commits_are_read_in_one_graphql_request(
    github: FakeGitHub, key: AppKey
) -> None:
    github.set_file(REPO, BASE, "AGENTS.md", "Base rules.\n")
    github.set_file(REPO, HEAD, "AGENTS.md", "Head rules.\n")
    github.set_file(REPO, HEAD, "shop/pay.py", "def pay() -> None: ...\n")
    files = [FileAt(BASE, "AGENTS.md"), FileAt(HEAD, "AGENTS.md"), FileAt(HEAD, "shop/pay.py")]

    texts = await installation(github, key).texts(REF, files)

    assert texts == {
        FileAt(BASE, "AGENTS.md"): "Base rules.\n",
        FileAt(HEAD, "AGENTS.md"): "Head rules.\n",
        FileAt(HEAD, "shop/pay.py"): "def pay() -> None: ...\n",
    }
    (request,) = graphql_requests(github)
    assert request.status == 200
    assert github.requests_to("GET", CONTENTS) == []


async def test_a_path_with_quotes_a_newline_and_unicode_is_read_as_named(
    github: FakeGitHub, key: AppKey
) -> None:
    github.set_file(REPO, HEAD, STRANGE, "strange\n")
    github.set_file(REPO, HEAD, "docs/say", "not this one\n")

    texts = await installation(github, key).texts(REF, [FileAt(HEAD, STRANGE)])

    assert texts == {FileAt(HEAD, STRANGE): "strange\n"}
    (request,) = graphql_requests(github)
    assert "viewer" not in request.body["query"]
    assert "名前" not in request.body["query"]
    assert f"{HEAD}:{STRANGE}" in request.body["variables"].values()


async def test_a_missing_file_a_directory_and_a_binary_file_read_as_none(
    github: FakeGitHub, key: AppKey
) -> None:
    github.set_file(REPO, HEAD, "img/logo.png", b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    github.set_file(REPO, HEAD, "shop/pay.py", "pay\n")
    files = [
        FileAt(HEAD, "missing.md"),
        FileAt(HEAD, "shop"),
        FileAt(HEAD, "img/logo.png"),
        FileAt("c" * 40, "shop/pay.py"),
        FileAt(HEAD, "shop/pay.py"),
    ]

    texts = await installation(github, key).texts(REF, files)

    assert texts == dict.fromkeys(files[:-1], None) | {FileAt(HEAD, "shop/pay.py"): "pay\n"}
    assert len(graphql_requests(github)) == 1
    assert github.requests_to("GET", CONTENTS) == []


async def test_a_text_github_cuts_short_reads_as_none(github: FakeGitHub, key: AppKey) -> None:
    # GitHub's GraphQL gives the first 512,000 bytes of a longer text, and says it did.
    github.set_file(REPO, HEAD, "shop/long.py", "x = 1\n" * 90_000)
    github.set_file(REPO, HEAD, "shop/short.py", "x = 1\n" * 80_000)
    files = [FileAt(HEAD, "shop/long.py"), FileAt(HEAD, "shop/short.py")]

    texts = await installation(github, key).texts(REF, files)

    assert texts == {files[0]: None, files[1]: "x = 1\n" * 80_000}


async def test_sizes_are_read_in_one_graphql_request_without_the_texts(
    github: FakeGitHub, key: AppKey
) -> None:
    github.set_file(REPO, HEAD, "img/logo.png", b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    github.set_file(REPO, HEAD, "shop/pay.py", "päy\n" * 1000)
    files = [FileAt(HEAD, "shop/pay.py"), FileAt(HEAD, "img/logo.png"), FileAt(HEAD, "gone.py")]

    sizes = await installation(github, key).sizes(REF, files)

    assert sizes == {files[0]: 5000, files[1]: None, files[2]: None}
    (request,) = graphql_requests(github)
    assert "text" not in request.body["query"]
    assert "päy" not in str(request.response)


async def test_sizes_github_fails_to_give_are_not_known(github: FakeGitHub, key: AppKey) -> None:
    github.set_file(REPO, HEAD, "shop/pay.py", "pay\n")
    github.fail_next("POST", r"/graphql", 502)

    sizes = await installation(github, key).sizes(REF, [FileAt(HEAD, "shop/pay.py")])

    assert sizes == {}
    assert github.requests_to("GET", CONTENTS) == []


async def test_what_paths_are_is_read_in_one_graphql_request(
    github: FakeGitHub, key: AppKey
) -> None:
    github.set_file(REPO, HEAD, "shop/pay.py", "pay\n")
    github.set_file(REPO, HEAD, "linked", "shop", mode="120000")
    kinds = {
        FileAt(HEAD, "shop/pay.py"): PathKind.FILE,
        FileAt(HEAD, "linked"): PathKind.FILE,
        FileAt(HEAD, "shop"): PathKind.DIRECTORY,
        FileAt(HEAD, "linked/pay.py"): PathKind.NOTHING,
        FileAt(HEAD, "gone.py"): PathKind.NOTHING,
    }

    assert await installation(github, key).kinds(REF, kinds) == kinds
    assert len(graphql_requests(github)) == 1


async def test_what_paths_github_fails_to_answer_for_are_is_not_known(
    github: FakeGitHub, key: AppKey
) -> None:
    github.fail_next("POST", r"/graphql", 502)

    assert await installation(github, key).kinds(REF, [FileAt(HEAD, "shop/pay.py")]) == {}


GRAPHQL_ERRORS = {
    "data": None,
    "errors": [
        {
            "message": "Something went wrong while executing your query. This may be the "
            "result of a timeout, or it could be a GitHub bug."
        }
    ],
}
RATE_LIMITED = {
    "errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded for installation."}]
}


@pytest.mark.parametrize(
    ("status", "body"),
    [(200, GRAPHQL_ERRORS), (200, RATE_LIMITED), (502, None)],
    ids=["errors", "rate-limited", "bad-gateway"],
)
async def test_a_failed_graphql_request_is_read_file_by_file_through_the_contents_api(
    github: FakeGitHub,
    key: AppKey,
    caplog: pytest.LogCaptureFixture,
    status: int,
    body: dict[str, Any] | None,
) -> None:
    github.set_file(REPO, BASE, "AGENTS.md", "Base rules.\n")
    github.set_file(REPO, HEAD, "shop/pay.py", "pay\n")
    github.fail_next("POST", r"/graphql", status, body=body)
    files = [FileAt(BASE, "AGENTS.md"), FileAt(HEAD, "shop/pay.py"), FileAt(HEAD, "gone.py")]

    with caplog.at_level(logging.WARNING):
        texts = await installation(github, key).texts(REF, files)

    assert texts == {files[0]: "Base rules.\n", files[1]: "pay\n", files[2]: None}
    assert len(graphql_requests(github)) == 1
    assert len(github.requests_to("GET", CONTENTS)) == 3
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "contents API" in warning.getMessage()


async def test_more_than_a_hundred_files_are_read_in_several_requests(
    github: FakeGitHub, key: AppKey
) -> None:
    paths = [f"src/m{n:03}.py" for n in range(250)]
    for n, path in enumerate(paths):
        github.set_file(REPO, HEAD, path, f"x = {n}\n")

    texts = await installation(github, key).texts(REF, [FileAt(HEAD, p) for p in paths])

    assert texts == {FileAt(HEAD, p): f"x = {n}\n" for n, p in enumerate(paths)}
    requests = graphql_requests(github)
    asked = sorted(len(r.body["variables"]) - 2 for r in requests)  # owner and name aside
    assert asked == [50, 100, 100]
    assert github.requests_to("GET", CONTENTS) == []
