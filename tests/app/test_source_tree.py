"""A repository's files on disk as the search across them reads them: regular files under
the directory only, nothing through a symlink out of it, nothing too large or not text."""

import os
from pathlib import Path

from app.source_tree import DirectoryTree
from tests.scenarios.orders import FILES, write


def test_the_tree_lists_and_reads_the_project_s_files(tmp_path: Path) -> None:
    write(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[remote]\n")
    (tmp_path / "node_modules" / "left").mkdir(parents=True)
    (tmp_path / "node_modules" / "left" / "pad.js").write_text("module.exports = 1\n")
    tree = DirectoryTree(tmp_path)

    assert sorted(tree.paths(100)) == sorted(FILES)
    assert len(tree.paths(3)) == 3
    assert tree.read("shop/utils.py") == FILES["shop/utils.py"]


def test_nothing_outside_the_tree_or_past_its_limits_is_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'x'\n")
    root = write(tmp_path / "repo")
    (root / "shop" / "outside.py").symlink_to(secret)
    (root / "elsewhere").symlink_to(tmp_path)
    (root / "huge.py").write_text("x = 1\n" * 1_000)
    (root / "blob.py").write_bytes(b"\x00\x01\x02")
    (root / "latin.py").write_bytes("caf\xe9\n".encode("latin-1"))
    os.mkfifo(root / "pipe.py")
    tree = DirectoryTree(root, max_file_bytes=5_000)

    listed = tree.paths(100)

    assert "shop/outside.py" not in listed
    assert not any(p.startswith("elsewhere") for p in listed)
    unread = ["shop/outside.py", "elsewhere/secret.py", "../secret.py", "/etc/passwd"]
    unread += ["huge.py", "blob.py", "latin.py", "pipe.py", ".git/config"]
    assert {path: tree.read(path) for path in unread} == dict.fromkeys(unread)
