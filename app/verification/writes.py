"""What Tiebreak writes in a run's copy before the run: the reproduction, and the coder's
patches for a fix check.

A copy is the work of untrusted code (the project's setup ran there), and Tiebreak may be
root: no symlink is ever followed. A reproduction is a new file: a path
:func:`policies.verification.reproduction_problem` refuses, that exists already, or whose
parent is a symlink or not a directory is refused before anything is written; missing parent
directories are made. A patch applies only to a regular file reached through directories.
"""

import os
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from agents.diff import Diff
from agents.patches import PatchesOverlap, StaleLines, apply_patches
from agents.protocol import Patch
from app.verification.trees import TreeRefused
from policies.safety import is_safe_relative
from policies.verification import reproduction_problem

MAX_FILE_BYTES = 10_000_000
"""A larger file is not patched."""


def reproduction_refusal(tree: Path, path: str) -> str | None:
    """Why the reproduction may not be written at `path` in `tree`, or None."""
    if reason := reproduction_problem(path):
        return reason
    try:
        _plain_parents(tree, path)
    except TreeRefused as exc:
        return exc.reason
    if os.path.lexists(tree / path):
        return f"{path} exists already: a reproduction is a new file"
    return None


def write_reproduction(tree: Path, path: str, content: str, owner: int | None) -> None:
    """Write the new file `path` in `tree`, or raise :class:`TreeRefused` having written
    nothing."""
    if reason := reproduction_refusal(tree, path):
        raise TreeRefused(reason)
    current = tree
    for part in PurePosixPath(path).parts[:-1]:
        current = current / part
        if not current.exists():
            current.mkdir()
            _own(current, owner)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    descriptor = os.open(tree / path, flags, 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        if owner is not None:
            os.fchown(file.fileno(), owner, owner)
        file.write(content)


def apply_to_tree(tree: Path, patches: Sequence[Patch], diff: Diff) -> None:
    """Apply `patches` (adopted on `diff`) to the files of `tree`, or raise
    :class:`TreeRefused`."""
    by_path: dict[str, list[Patch]] = {}
    for patch in patches:
        by_path.setdefault(patch.path, []).append(patch)
    for path, theirs in by_path.items():
        if not is_safe_relative(path):
            raise TreeRefused(f"the patch's path {path!r} is not inside the repository")
        _plain_parents(tree, path)
        text = _read(tree / path, path)
        try:
            new = apply_patches(text, theirs, diff)
        except PatchesOverlap as exc:
            raise TreeRefused(f"two patches of {path} overlap") from exc
        except StaleLines as exc:
            raise TreeRefused(
                f"the lines a patch replaces in {path} are not those the diff shows"
            ) from exc
        descriptor = os.open(tree / path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as file:
            file.write(new)


def _plain_parents(tree: Path, path: str) -> None:
    """Raise :class:`TreeRefused` if a parent of `path` in `tree` is a symlink or not a
    directory (a missing one is fine)."""
    current = tree
    for part in PurePosixPath(path).parts[:-1]:
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode):
            raise TreeRefused(f"{path} goes through a symlink: {current.relative_to(tree)}")
        if not stat.S_ISDIR(mode):
            raise TreeRefused(f"{path} goes through {current.relative_to(tree)}, not a directory")


def _read(file: Path, path: str) -> str:
    try:
        # Non-blocking: a fifo left in the tree must not hang the review.
        descriptor = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise TreeRefused(f"{path} cannot be patched: {exc.strerror}") from exc
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_FILE_BYTES:
            raise TreeRefused(f"{path} is not a regular file of at most {MAX_FILE_BYTES} bytes")
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TreeRefused(f"{path} is not UTF-8 text: it is not patched") from exc


def _own(path: Path, owner: int | None) -> None:
    if owner is not None:
        os.lchown(path, owner, owner)
