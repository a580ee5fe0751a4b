"""A snapshot's archive extracted safely: the archive is untrusted, its author's to write.

The archive is read as a stream (never whole in memory) and every member is checked before
anything is written: one top directory holding everything, no absolute name and no `..`, no
device, pipe or other special file, and within :class:`SnapshotLimits`' files and bytes.
Each member is then written through `tarfile`'s `data` filter, which also refuses a link
that points outside the tree and a member written through such a link. A refusal refuses
the whole snapshot (:class:`SnapshotRefused`); the caller removes what was written, which is
always under the directory it gave. A disk too full to hold it is no fault of the archive's:
its `OSError` is raised as it is.
"""

import errno
import tarfile
from pathlib import Path, PurePosixPath

from app.snapshots.limits import SnapshotLimits, SnapshotRefused

SAFE_FILTER = getattr(tarfile, "data_filter", None)
"""Python's own filter for archives from untrusted sources (3.11.4 and later)."""
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
"""What writing says when the disk, not the archive, is at fault: raised as it is."""


def extract(archive: Path, into: Path, limits: SnapshotLimits) -> tuple[Path, int]:
    """Extract the gzipped tar `archive` under the empty directory `into`; its top directory
    and the bytes of files written."""
    if SAFE_FILTER is None:
        raise SnapshotRefused("this Python cannot extract an archive safely (no `data` filter)")
    top: str | None = None
    files = written = 0
    try:
        with tarfile.open(archive, mode="r|gz") as tar:
            for member in tar:
                top = _checked(member, top)
                files += 1
                written += member.size if member.isreg() else 0
                if files > limits.tree_files or written > limits.tree_bytes:
                    raise SnapshotRefused(_too_large(limits))
                tar.extract(member, into, filter=SAFE_FILTER)
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            raise  # the disk's fault, not the archive's: the caller says so
        # A FilterError is a TarError: a link leaving the tree, or a member through one. What
        # it says names the worker's own paths: it is chained, for the log, not shown.
        raise SnapshotRefused("its archive could not be extracted safely") from exc
    if top is None:
        raise SnapshotRefused("its archive is empty")
    return into / top, written


def _checked(member: tarfile.TarInfo, top: str | None) -> str:
    """The archive's top directory, `member` checked against it and the rules above."""
    name = PurePosixPath(member.name)
    if name.is_absolute() or ".." in name.parts or not name.parts:
        raise SnapshotRefused(f"its archive has a member outside its tree: {member.name!r}")
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        raise SnapshotRefused(f"its archive has a special file: {member.name!r}")
    if member.issym() or member.islnk():
        target = PurePosixPath(member.linkname)
        if target.is_absolute():
            raise SnapshotRefused(f"its archive has a link out of its tree: {member.name!r}")
    first = name.parts[0]
    if top is None:
        if len(name.parts) != 1 or not member.isdir():
            raise SnapshotRefused("its archive does not start with its one top directory")
        return first
    if first != top or len(name.parts) == 1:
        raise SnapshotRefused(f"its archive has a member outside its top directory: {first!r}")
    return top


def _too_large(limits: SnapshotLimits) -> str:
    return (
        f"the repository is larger than the {limits.tree_bytes // 2**20:,} MiB or "
        f"{limits.tree_files:,} files a review reads of it"
    )
