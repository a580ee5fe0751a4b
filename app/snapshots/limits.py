"""How large a snapshot may be, and the error of one refused.

A pull request's author chooses what its head holds, so a snapshot is bounded like any other
input: its archive as downloaded, the bytes and the files it extracts to, and what the cache
keeps of all of them. A snapshot past a limit, or one whose archive is unsafe, is refused
with :class:`SnapshotRefused`, and the review reads the changed files alone.
"""

from dataclasses import dataclass

from policies.errors import TiebreakError

MIB = 2**20


class SnapshotRefused(TiebreakError):
    """A snapshot is not kept: too large for the limits, or its archive is unsafe to extract.
    Its message is fit for the pull request's summary."""


@dataclass(frozen=True)
class SnapshotLimits:
    """The bounds of one snapshot and of the cache that keeps them."""

    archive_bytes: int = 256 * MIB
    """A larger download is stopped there."""
    tree_bytes: int = 1024 * MIB
    """Bytes of files one snapshot extracts to, as its archive's headers declare them."""
    tree_files: int = 100_000
    """Members (files, directories, links) of one snapshot's archive."""
    cache_bytes: int = 4096 * MIB
    """Bytes of files the cache keeps in all; the least recently used go first."""
    download_seconds: float = 120.0
    """How long a download and its extraction may take; a review waiting for another to
    finish the same snapshot waits as long again."""
