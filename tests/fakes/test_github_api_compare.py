"""The fake GitHub compares two commits as GitHub does."""

import hashlib

import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed
from githubkit_schemas.latest.models import SimpleUser

from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_api_kit import (
    BASE,
    CALC_HEAD,
    NAME,
    OWNER,
    REPO,
    add_calc_pull,
    failure,
    payload,
)

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
