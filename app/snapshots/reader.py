"""Python's `tarfile` reader, bounded for an archive its author wrote to hurt.

`tarfile` reads a metadata header's content (a GNU long name or link, a pax header, global or
not) whole into memory before it shows the member it describes, follows a chain of them by
recursion, keeps every member it read, with its pax headers, for as long as the archive is
open, and reads a GNU sparse file's maps block after block. An archive of 254 KiB can hold a
header of 256 MiB of zeros. So :class:`BoundedTar` checks each metadata header against
:data:`METADATA_BYTES` and :data:`METADATA_HEADERS` before its content is read, refuses sparse
files (no repository's archive holds one), and lets go of each member once the next is read.

It hooks `tarfile`'s own parsing (`TarInfo._proc_member`, `_proc_gnusparse_10`), so that what
is checked is what `tarfile` then reads: a parser of our own could be told apart from it by a
crafted archive. A Python without those hooks extracts nothing (:data:`HOOKED`).

Reads of the archive's file go through :class:`StoppableFile`, which ends the extraction when
its caller stopped waiting for it: a thread cannot be killed, but it can be told to stop.
"""

import io
import tarfile
import threading
from pathlib import Path
from typing import Any

from app.snapshots.limits import MIB, SnapshotRefused

METADATA_BYTES = MIB
"""The content of the metadata headers before one member, in all, and of the archive's
global headers, in all: GitHub writes a few hundred bytes (a long path, the commit's id)."""
METADATA_HEADERS = 8
"""Metadata headers before one member: GitHub writes two at most (a global one, a path)."""
METADATA_TYPES = frozenset(
    {
        tarfile.GNUTYPE_LONGNAME,
        tarfile.GNUTYPE_LONGLINK,
        tarfile.XHDTYPE,
        tarfile.XGLTYPE,
        tarfile.SOLARIS_XHDTYPE,
    }
)
HOOKED = all(hasattr(tarfile.TarInfo, hook) for hook in ("_proc_member", "_proc_gnusparse_10"))
"""Whether this Python's `tarfile` reads headers where :class:`BoundedTar` checks them."""
STOPPED = "its extraction was stopped"


class _Metadata:
    """The metadata headers read so far: before the member being read, and global ones."""

    def __init__(self) -> None:
        self.headers = self.bytes = self.global_bytes = 0

    def next_member(self) -> None:
        self.headers = self.bytes = 0

    def take(self, header: tarfile.TarInfo) -> None:
        """Count `header`, its content not read yet; raise :class:`SnapshotRefused` past the
        bounds."""
        if not 0 <= header.size <= METADATA_BYTES:
            raise SnapshotRefused(
                f"its archive has a header of {_size(header.size)}, more than the "
                f"{METADATA_BYTES // MIB} MiB a review reads of one"
            )
        self.headers += 1
        self.bytes += header.size
        if header.type == tarfile.XGLTYPE:
            self.global_bytes += header.size
        if self.headers > METADATA_HEADERS:
            raise SnapshotRefused(
                f"its archive has more than {METADATA_HEADERS} headers before one member"
            )
        if max(self.bytes, self.global_bytes) > METADATA_BYTES:
            raise SnapshotRefused(
                f"its archive's headers hold more than the {METADATA_BYTES // MIB} MiB a review "
                "reads of them"
            )


def _size(size: int) -> str:
    return f"{size / MIB:,.0f} MiB" if size >= MIB else f"{size:,} bytes"


class _Header(tarfile.TarInfo):
    """A member's header as `tarfile` parses it, checked before what follows it is read."""

    def _proc_member(self, tar: "BoundedTar") -> tarfile.TarInfo:
        if self.type in METADATA_TYPES:
            tar.metadata.take(self)
        elif self.type == tarfile.GNUTYPE_SPARSE:
            raise SnapshotRefused("its archive has a sparse file")
        processed: tarfile.TarInfo = super()._proc_member(tar)  # type: ignore[misc]
        return processed

    def _proc_gnusparse_10(self, *_: object) -> None:
        # A pax header's sparse file of GNU's format 1.0, whose maps would be read in blocks.
        raise SnapshotRefused("its archive has a sparse file")


class BoundedTar(tarfile.TarFile):
    """A gzipped tar read as a stream (:meth:`open` it with `mode="r|gz"`, and read its
    members with :meth:`next`), within the bounds above."""

    tarinfo = _Header
    members: list[tarfile.TarInfo]  # `tarfile`'s own, left out of its stubs
    metadata: _Metadata

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.metadata = _Metadata()  # before `tarfile` reads the first member
        super().__init__(*args, **kwargs)

    def next(self) -> tarfile.TarInfo | None:
        self.metadata.next_member()
        member = super().next()
        # Kept for a random access a stream cannot give: each member's, with its pax headers
        # (up to the bounds above), would be held until the archive is closed.
        self.members.clear()
        return member


class StoppableFile(io.FileIO):
    """An archive's file, each read of it refused (:class:`SnapshotRefused`) once `stop` is
    set. `tarfile` reads a stream some KiB at a time, so a stop is heard within a block of
    a member's content, however large the member."""

    def __init__(self, path: Path, stop: threading.Event) -> None:
        super().__init__(path, "rb")
        self._stop = stop

    def read(self, size: int | None = -1) -> bytes:
        if self._stop.is_set():
            raise SnapshotRefused(STOPPED)
        return super().read(size) or b""
