"""Removing a tree a test had its hands on: however deep, whatever modes it set, never through
a symlink, and never failing the review.

A test may make directories deeper than Python recurses (1,000 frames) and paths longer than
the system spells out (4,096 bytes): the walk keeps its own stack of names, and works from one
open directory to the next (`dir_fd`), never by a path longer than one name; at most two
directories are open at once, however deep the tree. A symlink is removed, never followed. A
directory the test locked (mode 0) is unlocked before it is read. What cannot be removed is
logged and left: the run's result, already had, is what matters.
"""

import contextlib
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OWNER = stat.S_IRWXU


def remove_tree(tree: Path) -> None:
    """`tree` gone (a file or symlink too); what could not be removed is logged and left, the
    rest removed."""
    failures: list[OSError] = []
    try:
        _remove(tree, failures)
    except OSError as exc:
        failures.append(exc)
    if failures:
        log.warning(
            "%s could not be removed: %s (%d entries left)", tree, failures[0], len(failures)
        )


def _remove(tree: Path, failures: list[OSError]) -> None:
    try:
        mode = tree.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        tree.unlink()
        return
    parent = os.open(tree.parent, _DIRECTORY)
    try:
        _remove_directory(parent, tree.name, mode, failures)
    finally:
        os.close(parent)


def _remove_directory(parent: int, name: str, mode: int, failures: list[OSError]) -> None:
    """The directory `name` (of `mode`) in `parent` removed with all it holds, depth first,
    by a stack of the names left at each level; `parent` is left open as it was. An entry
    that cannot be removed is added to `failures`, and the walk goes on without it."""
    current = _open_directory(parent, name, mode)
    names: list[str] = [name]
    """The names of the directories open below `parent`, down to the current one."""
    left: list[list[str]] = [os.listdir(current)]
    try:
        while left:
            if not left[-1]:
                # This level is done: up to its parent, and remove it from there.
                left.pop()
                done = names.pop()
                above = parent if not left else os.open("..", _DIRECTORY, dir_fd=current)
                os.close(current)
                current = above
                try:
                    os.rmdir(done, dir_fd=current)
                except OSError as exc:  # not emptied: what is left in it is counted already
                    failures.append(exc)
                continue
            entry = left[-1].pop()
            try:
                below = _entered(current, entry)
            except OSError as exc:
                failures.append(exc)
                continue
            if below is not None:
                os.close(current)
                current, entries = below
                names.append(entry)
                left.append(entries)
    finally:
        if current != parent:
            os.close(current)


def _entered(current: int, entry: str) -> tuple[int, list[str]] | None:
    """`entry` of `current` removed if it is no directory (None), else opened, with the names
    it holds."""
    mode = os.stat(entry, dir_fd=current, follow_symlinks=False).st_mode
    if not stat.S_ISDIR(mode):
        os.unlink(entry, dir_fd=current)
        return None
    below = _open_directory(current, entry, mode)
    try:
        return below, os.listdir(below)
    except OSError:
        os.close(below)
        raise


def _open_directory(parent: int, name: str, mode: int) -> int:
    """The directory `name` in `parent` opened, unlocked first if its `mode` would keep its
    owner from reading it or removing what it holds (root, whom no mode keeps out, leaves it
    as it is)."""
    if mode & _OWNER != _OWNER and os.geteuid() != 0:
        # It was a directory a moment ago (lstat), and no process of the run is left to swap
        # it for a symlink; a directory of another user's stays locked, and says so below.
        with contextlib.suppress(OSError):
            os.chmod(name, _OWNER, dir_fd=parent)
    return os.open(name, _DIRECTORY, dir_fd=parent)
