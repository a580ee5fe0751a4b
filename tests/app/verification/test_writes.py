"""What a run writes over its copy of a tree, which untrusted code prepared: a reproduction only
as a new file, patches only to regular files, never through a symlink, never hanging; all of
it in a directory of Tiebreak's own, the tree left as it was."""

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.diff import Diff
from agents.protocol import Patch, Reproduction
from app.verification.trees import TreeRefused
from app.verification.writes import write_additions
from tests.kits.project import snapshot
from tests.scenarios.shop import CART_HEAD, FIX

TEST = Reproduction(path="tests/unit/test_it.py", content="def test_it(): pass\n")

DIFF = Diff.parse(
    "diff --git a/shop/cart.py b/shop/cart.py\nnew file mode 100644\n--- /dev/null\n"
    "+++ b/shop/cart.py\n"
    f"@@ -0,0 +1,{len(CART_HEAD.splitlines())} @@\n"
    + "".join(f"+{line}\n" for line in CART_HEAD.splitlines())
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    tree = tmp_path / "copy"
    (tree / "shop").mkdir(parents=True)
    (tree / "shop" / "cart.py").write_text(CART_HEAD)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "cart.py").write_text(CART_HEAD)
    return tree


def test_the_additions_hold_the_reproduction_and_the_patched_files(
    tree: Path, tmp_path: Path
) -> None:
    (tree / "shop" / "cart.py").chmod(0o755)
    before = snapshot(tree)

    write_additions(tree, tmp_path / "additions", TEST, [FIX], DIFF)

    additions = tmp_path / "additions"
    assert sorted(str(p.relative_to(additions)) for p in additions.rglob("*")) == [
        "shop",
        "shop/cart.py",
        "tests",
        "tests/unit",
        "tests/unit/test_it.py",
    ]
    assert (additions / "tests" / "unit" / "test_it.py").read_text() == TEST.content
    patched = additions / "shop" / "cart.py"
    assert "for i in range(len(prices)):" in patched.read_text()
    assert patched.stat().st_mode & 0o777 == 0o755
    assert snapshot(tree) == before


def symlinked_file(tree: Path) -> None:
    (tree / "shop" / "cart.py").unlink()
    (tree / "shop" / "cart.py").symlink_to(tree.parent / "outside" / "cart.py")


def symlinked_directory(tree: Path) -> None:
    (tree / "shop" / "cart.py").unlink()
    (tree / "shop").rmdir()
    (tree / "shop").symlink_to(tree.parent / "outside")


def fifo(tree: Path) -> None:
    (tree / "shop" / "cart.py").unlink()
    os.mkfifo(tree / "shop" / "cart.py")


def changed(tree: Path) -> None:
    (tree / "shop" / "cart.py").write_text(CART_HEAD.replace("range(1, ", "range(2, "))


@pytest.mark.parametrize(
    ("prepare", "reason"),
    [
        (symlinked_file, "shop/cart.py cannot be patched: Too many levels of symbolic links"),
        (symlinked_directory, "shop/cart.py goes through a symlink: shop"),
        (fifo, "shop/cart.py is not a regular file"),
        (changed, "the lines a patch replaces in shop/cart.py are not those the diff shows"),
    ],
)
def test_a_patch_that_the_copy_does_not_take_is_refused_and_writes_nothing(
    tree: Path, prepare: Callable[[Path], None], reason: str
) -> None:
    prepare(tree)
    before = snapshot(tree.parent)

    with pytest.raises(TreeRefused) as refused:
        write_additions(tree, tree.parent / "additions", TEST, [FIX], DIFF)

    assert refused.value.reason.startswith(reason)
    assert snapshot(tree.parent) == before


def test_two_overlapping_patches_are_refused(tree: Path) -> None:
    wider = Patch(path="shop/cart.py", start_line=6, end_line=7, replacement="x")

    with pytest.raises(TreeRefused, match=r"two patches of shop/cart\.py overlap"):
        write_additions(tree, tree.parent / "additions", TEST, [FIX, wider], DIFF)
