"""Which paths a patch may touch.

Protected paths are gitignore-style globs (`.github/workflows/**`). A path that is absolute,
climbs out of the repository (`..`) or is empty is never patchable, whatever the globs say:
the diff comes from an untrusted change and its paths are untrusted too.
"""

import posixpath
from collections.abc import Iterable, Sequence

from pathspec import GitIgnoreSpec

ALWAYS_PROTECTED = (".github/workflows/**", ".github/tiebreak.yml")
"""Paths no patch touches whatever a config says: CI definitions and Tiebreak's own rules."""


class ProtectedPaths:
    """A set of globs naming paths that no patch may change."""

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs = tuple(plain_globs(tuple(globs)))
        self._spec = GitIgnoreSpec.from_lines(self.globs)

    def forbids(self, path: str) -> str | None:
        """The reason `path` may not be patched, or None if it may."""
        if not is_safe_relative(path):
            return f"{path!r} is not a plain path inside the repository"
        if self._spec.match_file(posixpath.normpath(path)):
            return f"{path} is a protected path"
        return None


def is_safe_relative(path: str) -> bool:
    """Whether `path` is a non-empty relative path that stays inside the repository."""
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return False
    return ".." not in path.split("/")


def plain_globs(globs: Sequence[str]) -> Sequence[str]:
    """`globs` as given, refusing empty patterns and `!` negations, which could carve
    exceptions out of other patterns (out of the protected workflows, say)."""
    for glob in globs:
        if not glob.strip():
            raise ValueError("a glob may not be empty")
        if glob.lstrip().startswith("!"):
            raise ValueError(f"{glob!r}: negated globs are not supported; list what to match")
    return globs
