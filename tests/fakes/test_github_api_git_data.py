"""The fake GitHub's git store and Git Data API behave as GitHub's, forks included."""

import base64
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed

from tests.fakes.github_api import (
    NOT_ACCESSIBLE,
    NOT_FAST_FORWARD,
    OBJECT_MISSING,
    REF_MISSING,
    FakeGitHub,
)
from tests.fakes.github_api_kit import (
    BASE,
    CALC_BASE_FILES,
    CALC_HEAD,
    CALC_HEAD_FILES,
    CALC_NUMBER,
    NAME,
    OWNER,
    REPO,
    add_calc_pull,
    failure,
    payload,
)

# -- git data ---------------------------------------------------------------------------------


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
