"""How large a snapshot may be, and the error of one refused.

A pull request's author chooses what its head holds, so a snapshot is bounded like any other
input: its archive as downloaded, what it extracts to (the disk's blocks and inodes its
members take, :class:`Footprint`), and what the cache keeps of all of them. A snapshot past
a limit, or one whose archive is unsafe, is refused with :class:`SnapshotRefused`, and the
review reads the changed files alone.
"""

from dataclasses import dataclass

from policies.errors import TiebreakError

MIB = 2**20
BLOCK = 4096
"""What one member of a snapshot takes of a disk at least: a block, as a directory's entries,
a file's first bytes, a link or an empty file's inode take one."""


class SnapshotRefused(TiebreakError):
    """A snapshot is not kept: too large for the limits, or its archive is unsafe to extract.
    Its message is fit for the pull request's summary."""


@dataclass(frozen=True)
class SnapshotLimits:
    """The bounds of one snapshot and of the cache that keeps them."""

    archive_bytes: int = 256 * MIB
    """A larger download is stopped there."""
    tree_bytes: int = 1024 * MIB
    """Bytes of disk one snapshot takes: its members' blocks, one at least for each."""
    tree_files: int = 100_000
    """Members (files, directories, links) of one snapshot's archive."""
    cache_bytes: int = 4096 * MIB
    """Bytes of disk the cache's snapshots take in all; the least recently used go first."""
    cache_files: int = 400_000
    """Members of the cache's snapshots in all, each an inode of the disk's; the least
    recently used go first."""
    download_seconds: float = 120.0
    """How long a download and its extraction may take; a review waiting for another to
    finish the same snapshot waits as long again."""


@dataclass(frozen=True)
class Footprint:
    """What a snapshot takes of the disk: its members' blocks, as bytes, and its members, each
    an inode of the disk's (or an entry, for a hard link)."""

    bytes: int = 0
    members: int = 0
