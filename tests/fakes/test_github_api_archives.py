"""The fake GitHub serves a repository's archive as GitHub does: a redirect to a download URL,
and there a gzipped tar of the commit's snapshot under one top directory."""

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import httpx
import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed

from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_api_kit import (
    CALC_HEAD,
    CALC_HEAD_FILES,
    NAME,
    OTHER_REPO,
    OWNER,
    REPO,
    add_calc_pull,
)

TOP = f"{OWNER}-{NAME}-{CALC_HEAD[:7]}"


def members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: m for m in tar.getmembers()}


def texts(data: bytes) -> dict[str, str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {
            m.name: file.read().decode()
            for m in tar.getmembers()
            if m.isreg() and (file := tar.extractfile(m)) is not None
        }


async def test_the_archive_redirects_to_a_download_of_the_commit_under_one_top_directory(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)

    response = await github.rest.repos.async_download_tarball_archive(OWNER, NAME, CALC_HEAD)

    # The installation's token is asked for first, through the same client.
    *_, redirect = response.raw_response.history
    download = response.raw_response
    assert redirect.status_code == 302
    location = redirect.headers["location"]
    assert f"/{OWNER}/{NAME}/legacy.tar.gz/{CALC_HEAD}?token=" in location
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/x-gzip"
    assert download.headers["content-disposition"] == f"attachment; filename={TOP}.tar.gz"
    assert texts(response.content) == {f"{TOP}/{p}": t for p, t in CALC_HEAD_FILES.items()}
    found = members(response.content)
    assert [n for n, m in found.items() if m.isdir()] == [TOP, f"{TOP}/docs"]
    with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as tar:
        tar.getmembers()
        assert tar.pax_headers == {"comment": CALC_HEAD}


async def test_a_branch_names_its_commit_and_an_unknown_ref_is_404(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)

    by_branch = await github.rest.repos.async_download_tarball_archive(OWNER, NAME, "fix-calc")
    with pytest.raises(RequestFailed) as unknown:
        await github.rest.repos.async_download_tarball_archive(OWNER, NAME, "f" * 40)

    assert texts(by_branch.content) == {f"{TOP}/{p}": t for p, t in CALC_HEAD_FILES.items()}
    assert unknown.value.response.status_code == 404


async def test_the_download_url_needs_no_authorization_but_its_own_token(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy], plain: httpx.AsyncClient
) -> None:
    add_calc_pull(fake)
    redirect = await github.rest.repos.async_download_tarball_archive(
        OWNER, NAME, CALC_HEAD, stream=True
    )
    location = httpx.URL(redirect.raw_response.history[-1].headers["location"])
    await redirect.raw_response.aclose()

    unauthenticated = await plain.get(location)
    no_token = await plain.get(location.copy_remove_param("token"))
    other_repo = await plain.get(
        str(location).replace(f"/{OWNER}/{NAME}/", f"/{OTHER_REPO}/"),
    )

    assert unauthenticated.status_code == 200
    assert members(unauthenticated.content)
    assert (no_token.status_code, other_repo.status_code) == (404, 404)


async def test_a_repository_the_token_cannot_see_is_404(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)
    fake.add_repo(OTHER_REPO)
    fake.set_file(OTHER_REPO, "main", "secret.txt", "no\n")
    owner, name = OTHER_REPO.split("/")

    with pytest.raises(RequestFailed) as hidden:
        await github.rest.repos.async_download_tarball_archive(owner, name, "main")

    assert hidden.value.response.status_code == 404


async def test_a_replaced_archive_is_served_as_given(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    add_calc_pull(fake)
    fake.replace_archive(REPO, CALC_HEAD, b"not a tarball")

    response = await github.rest.repos.async_download_tarball_archive(OWNER, NAME, CALC_HEAD)

    assert response.content == b"not a tarball"
    assert len(fake.requests_to("GET", rf"/repos/{REPO}/tarball/{CALC_HEAD}")) == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_members_and_modes_are_those_git_archive_writes(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy], tmp_path: Path
) -> None:
    """Executables, a symlink and a submodule, committed through the Git Data API, archived by
    the fake and by `git archive` from the same tree."""
    add_calc_pull(fake)
    head = await github.rest.git.async_get_commit(OWNER, NAME, CALC_HEAD)
    tree = await github.rest.git.async_create_tree(
        OWNER,
        NAME,
        base_tree=head.parsed_data.tree.sha,
        tree=[
            {"path": "run.sh", "mode": "100755", "type": "blob", "content": "#!/bin/sh\necho\n"},
            {"path": "docs/latest", "mode": "120000", "type": "blob", "content": "README.md"},
            {"path": "vendor/lib", "mode": "160000", "type": "commit", "sha": "c" * 40},
        ],
    )
    commit = await github.rest.git.async_create_commit(
        OWNER, NAME, message="More", tree=tree.parsed_data.sha, parents=[CALC_HEAD]
    )
    sha = commit.parsed_data.sha

    response = await github.rest.repos.async_download_tarball_archive(OWNER, NAME, sha)

    top = f"{OWNER}-{NAME}-{sha[:7]}"
    expected = members(_git_archive(tmp_path, tree.parsed_data.sha, fake, prefix=f"{top}/"))
    found = members(response.content)
    assert list(found) == list(expected)
    for name, member in found.items():
        want = expected[name]
        assert (member.type, member.mode, member.linkname, member.size) == (
            want.type,
            want.mode,
            want.linkname,
            want.size,
        ), name


def _git_archive(where: Path, tree: str, fake: FakeGitHub, *, prefix: str) -> bytes:
    """`git archive` of the fake's tree `tree`, rebuilt object by object in a repository."""

    def git(*args: str, stdin: bytes = b"") -> bytes:
        done = subprocess.run(["git", *args], cwd=where, input=stdin, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout

    git("init", "-q")

    def write(sha: str) -> None:
        lines = []
        for name, (mode, kind, child) in fake.tree_entries(sha).items():
            if kind == "tree":
                write(child)
            elif kind == "blob":
                content = fake.blob(child)
                assert git("hash-object", "-w", "--stdin", stdin=content).decode().strip() == child
            lines.append(f"{mode} {kind} {child}\t{name}\n")
        assert git("mktree", "--missing", stdin="".join(lines).encode()).decode().strip() == sha

    write(tree)
    return git("archive", "--format=tar.gz", f"--prefix={prefix}", tree)
