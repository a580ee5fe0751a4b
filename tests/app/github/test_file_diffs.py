"""A pull request above GitHub's diff limits (406 for the diff media type) has its diff rebuilt
from the files API, through the real githubkit client against the fake GitHub: every kind of
change the API lists parses, with the right paths, deleted files and new-side lines, and
review units over the files that have lines to review."""

from collections.abc import Iterator
from typing import Any

import pytest

from agents.diff import Diff
from app.events import PullRequestRef
from app.github.client import GitHubApp
from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key

REPO, NUMBER, INSTALLATION, APP_ID = "octo/shop", 7, 3, 42
HEAD, BASE = "a" * 40, "b" * 40
REF = PullRequestRef(
    installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER, head_sha=HEAD
)

MAIN = {
    "filename": "main.py",
    "status": "modified",
    "patch": "@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2",
}
"""A file changed beside each kind of change: the section before it must not swallow it."""
MAIN_LINES = {1: "def main():", 2: "    return 2"}

ONE_LINE = "@@ -1 +1 @@\n-x = 1\n+x = 2"


def case(
    entry: dict[str, Any],
    lines: dict[int, str] | None,
    *,
    deleted: bool = False,
    reviewed: bool | None = None,
) -> tuple[dict[str, Any], dict[int, str] | None, bool, bool]:
    """`entry` as the files API lists it; its new-side `lines` in the rebuilt diff (None: the
    diff leaves it out, as `git diff` would), whether it is a deleted file, and whether a
    review unit covers it (by default, when it has lines)."""
    return entry, lines, deleted, bool(lines) if reviewed is None else reviewed


CASES = {
    "added": case(
        {"filename": "new.py", "status": "added", "patch": "@@ -0,0 +1,2 @@\n+a = 1\n+b = 2"},
        {1: "a = 1", 2: "b = 2"},
    ),
    "removed": case(
        {"filename": "gone.py", "status": "removed", "patch": "@@ -1,2 +0,0 @@\n-a = 1\n-b = 2"},
        {},
        deleted=True,
    ),
    "modified": case(
        {"filename": "lib.py", "status": "modified", "patch": "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"},
        {1: "a", 2: "B", 3: "c"},
    ),
    "renamed and changed": case(
        {
            "filename": "lib/new.py",
            "previous_filename": "lib/old.py",
            "status": "renamed",
            "patch": ONE_LINE,
        },
        {1: "x = 2"},
    ),
    "renamed only": case(
        {"filename": "lib/new.py", "previous_filename": "lib/old.py", "status": "renamed"}, {}
    ),
    "copied": case(
        {
            "filename": "lib/copy.py",
            "previous_filename": "lib/old.py",
            "status": "copied",
            "patch": ONE_LINE,
        },
        {1: "x = 2"},
    ),
    "changed mode": case({"filename": "run.sh", "status": "changed"}, {}),
    "changed mode and text": case(
        {"filename": "run.sh", "status": "changed", "patch": ONE_LINE}, {1: "x = 2"}
    ),
    "unchanged": case({"filename": "same.py", "status": "unchanged"}, None),
    "binary, modified": case({"filename": "logo.png", "status": "modified"}, {}),
    "binary, added": case({"filename": "logo.png", "status": "added"}, {}),
    "binary, removed": case({"filename": "logo.png", "status": "removed"}, {}, deleted=True),
    "too large to show, modified": case(
        {"filename": "data.sql", "status": "modified", "additions": 30_000, "deletions": 2}, {}
    ),
    "too large to show, removed": case(
        {"filename": "data.sql", "status": "removed", "deletions": 30_000}, {}, deleted=True
    ),
    "a path with spaces": case(
        {"filename": "docs/read me.md", "status": "modified", "patch": ONE_LINE}, {1: "x = 2"}
    ),
}


@pytest.fixture(scope="module")
def key() -> AppKey:
    return new_app_key()


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        yield fake


@pytest.mark.parametrize(("entry", "lines", "deleted", "reviewed"), CASES.values(), ids=CASES)
async def test_a_rebuilt_diff_parses_with_the_right_files_and_lines(
    github: FakeGitHub,
    key: AppKey,
    entry: dict[str, Any],
    lines: dict[int, str] | None,
    deleted: bool,
    reviewed: bool,
) -> None:
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, files=[entry, MAIN], too_large=True)
    gh = GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False).installation(INSTALLATION)

    rebuilt = Diff.parse(await gh.diff(REF))

    # The diff media type refused it: the files API was read instead.
    assert [r.status for r in github.requests_to("GET", rf"/repos/{REPO}/pulls/{NUMBER}")] == [406]
    assert github.requests_to("GET", rf"/repos/{REPO}/pulls/{NUMBER}/files")
    path = entry["filename"]
    expected = {"main.py": MAIN_LINES} if lines is None else {path: lines, "main.py": MAIN_LINES}
    assert rebuilt.paths == tuple(expected)
    assert {f.path: _lines(f.path, rebuilt) for f in rebuilt.files} == expected
    assert [f.path for f in rebuilt.files if f.deleted] == ([path] if deleted else [])
    (unit,) = rebuilt.units()
    assert unit.diff.paths == ((path, "main.py") if reviewed else ("main.py",))


def _lines(path: str, diff: Diff) -> dict[int, str]:
    found = diff.file(path)
    assert found is not None
    return {n: h.lines[n] for h in found.hunks for n in h.lines}
