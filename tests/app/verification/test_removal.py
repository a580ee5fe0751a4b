"""Removing a tree a test had its hands on: whatever it locked, however deep, never through a
symlink, and never failing the review."""

import array
import contextlib
import fcntl
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.verification.removal import remove_tree


def test_a_copy_is_removed_whatever_its_run_locked(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    (copy / "locked" / "deeper").mkdir(parents=True)
    (copy / "locked" / "deeper" / "file").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o555)
    (copy / "to-outside").symlink_to(outside)
    (copy / "locked" / "deeper").chmod(0)
    (copy / "locked").chmod(0)

    remove_tree(copy)

    assert not copy.exists()
    assert outside.stat().st_mode & 0o777 == 0o555


def deep_tree(top: Path, depth: int) -> Path:
    """`depth` nested directories under `top`, made without the path ever being spelled out
    (it would be longer than the system allows), each locked; the deepest returned."""
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(depth):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        with open("file", "w") as file:
            file.write("x")
    finally:
        os.chdir(here)
    return top


@pytest.fixture
def copy(tmp_path: Path) -> Iterator[Path]:
    """Where a test makes a tree to remove; whatever it leaves is removed after it by `rm`
    (pytest's own clean-up recurses, and would fail on a deep tree)."""
    yield tmp_path / "copy"
    subprocess.run(["rm", "-rf", "--", str(tmp_path / "copy")], check=True)


def test_a_tree_deeper_than_python_recurses_and_paths_reach_is_removed(
    copy: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    copy.mkdir()
    outside.mkdir()
    (outside / "kept").write_text("x")
    deep_tree(copy, 1_200)
    (copy / "to-outside").symlink_to(outside)
    (copy / ("d" * 200)).chmod(0)

    remove_tree(copy)

    assert not copy.exists()
    assert (outside / "kept").read_text() == "x"


IMMUTABLE = 0x10
"""FS_IMMUTABLE_FL: not even root may remove the file."""


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[None]:
    descriptor = os.open(path, os.O_RDONLY)
    flags = array.array("l", [0])
    try:
        fcntl.ioctl(descriptor, 0x80086601, flags)  # FS_IOC_GETFLAGS
        flags[0] |= IMMUTABLE
        try:
            fcntl.ioctl(descriptor, 0x40086602, flags)  # FS_IOC_SETFLAGS
        except OSError as exc:
            pytest.skip(f"this file system keeps no immutable flag ({exc.strerror})")
        yield
    finally:
        flags[0] &= ~IMMUTABLE
        with contextlib.suppress(OSError):
            fcntl.ioctl(descriptor, 0x40086602, flags)
        os.close(descriptor)


def test_a_tree_that_cannot_be_removed_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = tmp_path / "copy"
    (copy / "kept").mkdir(parents=True)
    (copy / "kept" / "stuck").write_text("x")
    (copy / "gone").write_text("x")

    with immutable(copy / "kept" / "stuck"), caplog.at_level(logging.WARNING):
        remove_tree(copy)

        assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == [
            "kept",
            "kept/stuck",
        ]
    assert f"{copy} could not be removed" in caplog.text
    assert "(3 entries left)" in caplog.text
    assert "Operation not permitted" in caplog.text
