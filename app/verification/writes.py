"""What a run's copy gets written over it before its command: the reproduction, and the
files the coder's patches change for a fix check, put in a directory of their own (a run's
`additions`) that the run copies over its tree.

A tree is the work of untrusted code (the project's setup ran there), and Tiebreak may be
root: it only reads the tree, never following a symlink, and writes in the new directory
alone. A reproduction is a new file: a path :func:`policies.verify.reproduction_problem`
refuses, that exists already in the tree, or whose parent there is a symlink or not a
directory is refused before anything is written; missing parent directories are made when it
is copied. A patch applies only to a regular file reached through directories; the patched
file keeps its mode.
"""

import os
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from agents.diff import Diff
from agents.patches import PatchesOverlap, StaleLines, apply_patches
from agents.protocol import Patch, Reproduction
from app.verification.trees import TreeRefused
from policies.safety import is_safe_relative
from policies.verify import reproduction_problem

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


def write_additions(
    tree: Path, additions: Path, reproduction: Reproduction, patches: Sequence[Patch], diff: Diff
) -> None:
    """`additions` (new) made to hold what a run writes over its copy of `tree`: the
    reproduction, and the files `patches` (adopted on `diff`) change. Raise
    :class:`TreeRefused` if either may not be written."""
    if reason := reproduction_refusal(tree, reproduction.path):
        raise TreeRefused(reason)
    changed = patched_files(tree, patches, diff)
    additions.mkdir()
    additions.chmod(0o755)  # the sandbox's user reads it, whatever the umask
    for path, (text, mode) in changed.items():
        _write(additions, path, text, mode)
    _write(additions, reproduction.path, reproduction.content, 0o644)


def patched_files(tree: Path, patches: Sequence[Patch], diff: Diff) -> dict[str, tuple[str, int]]:
    """The files of `tree` that `patches` (adopted on `diff`) change, by path: their new text
    and their mode. Raise :class:`TreeRefused` if a patch cannot apply."""
    by_path: dict[str, list[Patch]] = {}
    for patch in patches:
        by_path.setdefault(patch.path, []).append(patch)
    changed = {}
    for path, theirs in by_path.items():
        if not is_safe_relative(path):
            raise TreeRefused(f"the patch's path {path!r} is not inside the repository")
        _plain_parents(tree, path)
        text, mode = _read(tree / path, path)
        try:
            changed[path] = (apply_patches(text, theirs, diff), mode)
        except PatchesOverlap as exc:
            raise TreeRefused(f"two patches of {path} overlap") from exc
        except StaleLines as exc:
            raise TreeRefused(
                f"the lines a patch replaces in {path} are not those the diff shows"
            ) from exc
    return changed


def _write(additions: Path, path: str, text: str, mode: int) -> None:
    """`text` written at `path` in `additions`, a directory of Tiebreak's own."""
    target = additions / path
    for parent in reversed(PurePosixPath(path).parents[:-1]):
        (additions / parent).mkdir(exist_ok=True)
        (additions / parent).chmod(0o755)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    with os.fdopen(os.open(target, flags, 0o600), "w", encoding="utf-8", newline="") as file:
        os.fchmod(file.fileno(), mode)
        file.write(text)


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


def _read(file: Path, path: str) -> tuple[str, int]:
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
        return data.decode("utf-8"), stat.S_IMODE(status.st_mode)
    except UnicodeDecodeError as exc:
        raise TreeRefused(f"{path} is not UTF-8 text: it is not patched") from exc
