"""Archives made by hand, as no honest GitHub makes them: for the tests of what Tiebreak
refuses to extract."""

import gzip
import io
import tarfile
from collections.abc import Callable

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
}
"""Archives a review must refuse whole, by what makes each hostile: a file written through one
would land at `/tmp/escaped.py` or two directories above where it is extracted."""
