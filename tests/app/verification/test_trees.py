"""The trees on disk: what the head carries of a checkout, and how the base is made from a ref
or an untrusted diff without writing outside it."""

import asyncio
import os
from pathlib import Path

import pytest

from app.verification import trees
from app.verification.trees import TreeRefused
from tests.kits.project import snapshot
from tests.scenarios.shop import CART_BASE, CART_HEAD, HELPERS, Project, git


def files_in(tree: Path) -> dict[str, str]:
    """Every entry under `tree`: a file's text, a symlink's target."""
    found = {}
    for path in sorted(tree.rglob("*")):
        name = str(path.relative_to(tree))
        if path.is_symlink():
            found[name] = "-> " + os.readlink(path)
        elif path.is_file():
            found[name] = path.read_text()
    return found


async def test_the_head_is_the_work_tree_as_it_is_without_git_or_what_git_ignores(
    project: Project, tmp_path: Path
) -> None:
    (project.checkout / "shop" / "__pycache__").mkdir()
    (project.checkout / "shop" / "__pycache__" / "cart.cpython-311.pyc").write_bytes(b"\0")
    (project.checkout / "link").symlink_to("/etc/hostname")
    (project.checkout / "tests" / "test_cart.py").unlink()  # tracked, deleted: not there
    nested = project.checkout / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")

    await trees.copy_checkout(project.checkout, tmp_path / "head")

    assert files_in(tmp_path / "head") == {
        ".gitignore": "__pycache__/\n",
        "NOTES.md": "untracked, not ignored\n",
        "link": "-> /etc/hostname",
        "shop/__init__.py": "",
        "shop/cart.py": CART_HEAD,
        "tests/helpers.py": HELPERS,
    }


@pytest.mark.parametrize("from_ref", [False, True], ids=["diff-reversed", "base-ref"])
async def test_the_base_is_the_change_undone(
    project: Project, tmp_path: Path, from_ref: bool
) -> None:
    head, base = tmp_path / "head", tmp_path / "base"
    await trees.copy_checkout(project.checkout, head)

    if from_ref:
        await trees.archive(project.checkout, project.base, base)
    else:
        await trees.copy_tree(head, base)
        await trees.unapply(project.diff.text, base)

    assert (base / "shop" / "cart.py").read_text() == CART_BASE
    assert (head / "shop" / "cart.py").read_text() == CART_HEAD
    assert git(project.checkout, "status", "--porcelain") == "?? NOTES.md\n"


async def test_a_base_ref_cannot_pass_options_to_git(project: Project, tmp_path: Path) -> None:
    planted = tmp_path / "planted"

    with pytest.raises(TreeRefused, match="Not a valid object name --index-output="):
        await trees.archive(project.checkout, f"--index-output={planted}", tmp_path / "base")

    assert not planted.exists()


def deleted(path: str) -> str:
    """A diff that deletes `path`: reversed, it creates it."""
    return (
        f"diff --git a/{path} b/{path}\ndeleted file mode 100644\n--- a/{path}\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-planted = True\n"
    )


@pytest.mark.parametrize(
    ("diff", "refusal"),
    [
        (deleted("../escaped.py"), "invalid path '../escaped.py'"),
        (deleted("outside/planted.py"), "'outside/planted.py' is beyond a symbolic link"),
    ],
)
async def test_a_reversed_diff_writes_nothing_outside_the_tree(
    tmp_path: Path, diff: str, refusal: str
) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / "outside").symlink_to(outside)
    before = snapshot(tmp_path)

    with pytest.raises(TreeRefused, match=refusal):
        await trees.unapply(diff, tree)

    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("ending", ["cancelled", "timed out"])
async def test_a_git_run_that_ends_early_leaves_no_process_behind(
    ending: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A git that hangs: it says its pid down a pipe, then sleeps.
    bin_dir, pid_file = tmp_path / "bin", tmp_path / "git.pid"
    bin_dir.mkdir()
    os.mkfifo(pid_file)
    (bin_dir / "git").write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    if ending == "timed out":
        monkeypatch.setattr(trees, "GIT_TIMEOUT_S", 0.5)
    (tmp_path / "tree").mkdir()

    task = asyncio.create_task(trees.unapply("diff --git a/x b/x\n", tmp_path / "tree"))
    async with asyncio.timeout(10):
        pid = int(await asyncio.to_thread(pid_file.read_text))
    if ending == "cancelled":
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        with pytest.raises(TreeRefused, match=r"git apply took over 0\.5 s"):
            await task

    # Killed and reaped: not even a zombie is left.
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
