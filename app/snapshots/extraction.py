"""A snapshot's archive extracted safely: the archive is untrusted, its author's to write.

The archive is read as a stream (never whole in memory, each metadata header bounded before it
is read: :mod:`app.snapshots.reader`) and every member is checked before anything is written:
one top directory holding everything, no absolute name and no `..`, no device, pipe, sparse
or other special file, a hard link only to a file written before it, and within
:class:`SnapshotLimits`' members and bytes. The bytes are what the members take of the disk,
not what they declare: a directory, an empty file or a link takes an inode and a block as a
small file does (:func:`footprint`). Each member is then written through `tarfile`'s `data`
filter, which also refuses a link that points outside the tree and a member written through
such a link. A refusal refuses the whole snapshot (:class:`SnapshotRefused`); the caller
removes what was written, which is always under the directory it gave. A disk too full to
hold it is no fault of the archive's: its `OSError` is raised as it is.

The extraction runs in a thread (:func:`extracted`), stopped when its caller stops waiting
for it (its deadline passed, its review was cancelled): it ends before the caller goes on,
so that nothing is written after the caller removed what was.
"""

import asyncio
import errno
import tarfile
import threading
from pathlib import Path, PurePosixPath

from app.snapshots.limits import BLOCK, Footprint, SnapshotLimits, SnapshotRefused
from app.snapshots.reader import HOOKED, STOPPED, BoundedTar, StoppableFile

SAFE_FILTER = getattr(tarfile, "data_filter", None)
"""Python's own filter for archives from untrusted sources (3.11.4 and later)."""
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
"""What writing says when the disk, not the archive, is at fault: raised as it is."""


async def extracted(archive: Path, into: Path, limits: SnapshotLimits) -> tuple[Path, Footprint]:
    """:func:`extract` in a thread; when this is cancelled, the thread is told to stop and
    waited for before the cancellation goes on."""
    stop = threading.Event()
    thread = asyncio.ensure_future(asyncio.to_thread(extract, archive, into, limits, stop))
    try:
        return await asyncio.shield(thread)
    finally:
        if not thread.done():
            stop.set()
            # What the stopped thread raised is of no interest: `shield` retrieves it.
            await asyncio.wait([thread])


def extract(
    archive: Path, into: Path, limits: SnapshotLimits, stop: threading.Event | None = None
) -> tuple[Path, Footprint]:
    """Extract the gzipped tar `archive` under the empty directory `into`, unless `stop` is
    set meanwhile; its top directory and what it takes of the disk."""
    if SAFE_FILTER is None or not HOOKED:
        raise SnapshotRefused("this Python cannot extract an archive safely")
    stop = stop or threading.Event()
    top: str | None = None
    taken = Footprint()
    written: set[str] = set()  # regular files' names, which a hard link may point to
    try:
        with (
            StoppableFile(archive, stop) as file,
            BoundedTar.open(fileobj=file, mode="r|gz") as tar,
        ):
            while (member := tar.next()) is not None:
                if stop.is_set():  # the file is read a block at a time, for many members
                    raise SnapshotRefused(STOPPED)
                top = _checked(member, top, written)
                taken = Footprint(taken.bytes + footprint(member), taken.members + 1)
                if taken.members > limits.tree_files or taken.bytes > limits.tree_bytes:
                    raise SnapshotRefused(_too_large(limits))
                tar.extract(member, into, filter=SAFE_FILTER)
                if member.isreg() or member.islnk():
                    written.add(member.name)
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            raise  # the disk's fault, not the archive's: the caller says so
        # A FilterError is a TarError: a link leaving the tree, or a member through one. What
        # it says names the worker's own paths: it is chained, for the log, not shown.
        raise SnapshotRefused("its archive could not be extracted safely") from exc
    if top is None:
        raise SnapshotRefused("its archive is empty")
    return into / top, taken


def footprint(member: tarfile.TarInfo) -> int:
    """The bytes of disk `member` takes: its content in whole blocks, one block at least."""
    content = member.size if member.isreg() else 0
    return max(1, -(-content // BLOCK)) * BLOCK


def _checked(member: tarfile.TarInfo, top: str | None, written: set[str]) -> str:
    """The archive's top directory, `member` checked against it and the rules above."""
    name = PurePosixPath(member.name)
    if name.is_absolute() or ".." in name.parts or not name.parts:
        raise SnapshotRefused(f"its archive has a member outside its tree: {member.name!r}")
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        raise SnapshotRefused(f"its archive has a special file: {member.name!r}")
    if member.size < 0:
        raise SnapshotRefused(f"its archive has a member of a negative size: {member.name!r}")
    if member.sparse is not None:
        raise SnapshotRefused(f"its archive has a sparse file: {member.name!r}")
    if member.issym() or member.islnk():
        target = PurePosixPath(member.linkname)
        if target.is_absolute():
            raise SnapshotRefused(f"its archive has a link out of its tree: {member.name!r}")
    if member.islnk() and member.linkname not in written:
        # `tarfile` would look for it in the rest of the stream, and fail there.
        raise SnapshotRefused(f"its archive has a hard link to no file before it: {member.name!r}")
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
