"""A repository's files on disk, as the search across its files (`agents.context.related`) reads
them: in a parsing process (`app.parsing`), never on the event loop; and as the conventions of
its tests are read from their paths (:func:`conventions_in`, in a thread).

The directory is untrusted (a pull request's head, a local checkout under review): only
regular files under it are listed and read, found without following a symlink; a path that
climbs out or resolves outside the directory reads as nothing, and so does a file larger than
:data:`MAX_FILE_BYTES`, one that is not UTF-8 text, or a fifo (opened without waiting for a
writer). Directories no code lives in (`.git`, virtual environments, `node_modules`, caches)
are not listed.
"""

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from agents.context.reading import MAX_SOURCE_CHARS
from agents.context.related import Bounds, Related, related
from agents.conventions import ProjectTests
from agents.diff import Diff
from policies.safety import is_safe_relative

MAX_LISTED = 20_000
"""The most paths the conventions of a repository's tests are read from."""
MAX_FILE_BYTES = MAX_SOURCE_CHARS
"""A larger file is not read: as large a file as the context parses."""
UNLISTED = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})
"""Directories not listed, beside those whose name starts with a dot."""


class DirectoryTree:
    """The regular files under `root`, relative to it and '/'-separated."""

    def __init__(self, root: Path, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.root = root.resolve()
        self.max_file_bytes = max_file_bytes

    def paths(self, limit: int) -> Sequence[str]:
        found: list[str] = []
        pending = [""]
        while pending and len(found) < limit:
            folder = pending.pop()
            try:
                entries = sorted(os.scandir(self.root / folder), key=lambda e: e.name)
            except OSError:  # gone, or not ours to read
                continue
            for entry in entries:
                relative = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith(".") and entry.name not in UNLISTED:
                        pending.append(relative)
                elif entry.is_file(follow_symlinks=False):
                    found.append(relative)
        return found[:limit]

    def read(self, path: str) -> str | None:
        if not is_safe_relative(path):
            return None
        full = (self.root / path).resolve()
        if not full.is_relative_to(self.root):
            return None
        try:
            descriptor = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(descriptor, "rb") as file:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode) or status.st_size > self.max_file_bytes:
                return None
            data = file.read(self.max_file_bytes + 1)
        try:
            return None if b"\0" in data else data.decode()
        except UnicodeDecodeError:
            return None


def related_in(root: str, diff: Diff, bounds: Bounds) -> Related:
    """What the files under `root` tell about `diff`: the task a parsing process runs."""
    return related(diff, DirectoryTree(Path(root)), bounds)


def conventions_in(
    root: Path | None, command: str | None, also: Sequence[str] = ()
) -> ProjectTests | None:
    """How the tests of the repository at `root` (None: not read), with the files at `also`
    (the changed ones), are written, run by `command`; None when no command runs them."""
    if command is None:
        return None
    listed = DirectoryTree(root).paths(MAX_LISTED) if root is not None else ()
    return ProjectTests.of([*listed, *also], command)
