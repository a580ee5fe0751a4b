"""Archives made by hand, as no honest GitHub makes them: for the tests of what Tiebreak
refuses to extract."""

import gzip
import io
import tarfile
from collections.abc import Callable
from pathlib import Path

TOP = "octo-app-0123456"

Member = Callable[[tarfile.TarFile], None]
"""Adds one member to an archive being written."""


def directory(name: str) -> Member:
    return lambda tar: tar.addfile(_info(name, tarfile.DIRTYPE))


def regular(name: str, content: bytes = b"x = 1\n") -> Member:
    def add(tar: tarfile.TarFile) -> None:
        info = _info(name, tarfile.REGTYPE)
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))

    return add


def header(kind: bytes, content: bytes) -> Member:
    """A metadata header of type `kind` (a GNU long name `L`, a pax header `x`) holding
    `content`, written as is, before the next member."""

    def add(tar: tarfile.TarFile) -> None:
        info = _info("././@LongLink", kind)
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))

    return add


def sparse(name: str) -> Member:
    """A GNU sparse file, as no repository's archive holds one."""
    return lambda tar: tar.addfile(_info(name, tarfile.GNUTYPE_SPARSE))


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> Member:
    def add(tar: tarfile.TarFile) -> None:
        info = _info(name, kind)
        info.linkname = target
        tar.addfile(info)

    return add


def device(name: str) -> Member:
    def add(tar: tarfile.TarFile) -> None:
        info = _info(name, tarfile.CHRTYPE)
        info.devmajor, info.devminor = 1, 3
        tar.addfile(info)

    return add


def archive(*members: Member) -> bytes:
    """A gzipped tar of `members`, in order."""
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for add in members:
            add(tar)
    return buffer.getvalue()


def honest(files: dict[str, str], top: str = TOP) -> bytes:
    """An archive as GitHub makes one: `files` under one top directory."""
    folders = sorted({f"{top}/{p.rsplit('/', 1)[0]}" for p in files if "/" in p})
    return archive(
        directory(top),
        *(directory(f) for f in folders),
        *(regular(f"{top}/{p}", text.encode()) for p, text in files.items()),
    )


def empty_files(count: int, top: str = TOP) -> bytes:
    """An archive of `count` directories holding one empty file each: no byte of content, but
    an inode and a block of the disk for each of its members."""
    return archive(
        directory(top),
        *(
            m
            for i in range(count)
            for m in (directory(f"{top}/d{i}"), regular(f"{top}/d{i}/e", b""))
        ),
    )


def oversized_header(path: Path, kind: bytes, declared: int) -> None:
    """Write at `path` an archive whose first member is a metadata header of type `kind`
    holding `declared` zero bytes, then its top directory: a thousandth of that on the wire
    (zeros compress so), all of it in memory to a reader that takes a header whole."""
    with (
        gzip.GzipFile(path, mode="wb", compresslevel=9, mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.GNU_FORMAT) as tar,
    ):
        info = _info("././@LongLink", kind)
        info.size = declared
        tar.addfile(info, _Zeros(declared))
        directory(TOP)(tar)


class _Zeros(io.RawIOBase):
    """`size` zero bytes to read, never held at once."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


def _info(name: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info


HOSTILE = {
    "a ../ path": archive(directory(TOP), regular(f"{TOP}/../../escaped.py")),
    "an absolute path": archive(directory(TOP), regular("/tmp/escaped.py")),
    "a symlink to /etc": archive(directory(TOP), link(f"{TOP}/etc", "/etc")),
    "a device file": archive(directory(TOP), device(f"{TOP}/null")),
    "no gzipped tar": b"<html>Not an archive</html>",
    "a chain of headers": archive(
        directory(TOP), *[header(tarfile.XHDTYPE, b"15 comment=abc\n")] * 600, regular(f"{TOP}/a")
    ),
    "a hard link ahead of its file": archive(
        directory(TOP), link(f"{TOP}/h", f"{TOP}/a", tarfile.LNKTYPE), regular(f"{TOP}/a")
    ),
}
"""Archives a review must refuse whole, by what makes each hostile: a file written through one
would land at `/tmp/escaped.py` or two directories above where it is extracted."""
