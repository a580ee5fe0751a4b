"""Zips a workflow run's artifact may hold, for the tests: the template's result file zipped as
`actions/upload-artifact` zips it, and real zips Python's `zipfile` cannot read, each made by
changing the bytes of a real one where the zip format puts them (APPNOTE.TXT §4.3.7, §4.3.12)."""

import io
import json
import struct
import zipfile
from collections.abc import Callable, Mapping
from typing import Any

LOCAL_HEADER = b"PK\x03\x04"
CENTRAL_HEADER = b"PK\x01\x02"


def zipped(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def passing(token: str) -> dict[str, Any]:
    """A result showing the test passing at the head and at the base."""
    side = {"exit_code": 0, "output_tail": "ok", "error": None}
    return {"token": token, "head": side, "base": side}


def result_zip(result: Mapping[str, Any]) -> bytes:
    return zipped({"result.json": json.dumps(result).encode()})


def corrupt_deflate(token: str) -> bytes:
    """The result file's deflated bytes replaced by bytes no inflater reads (`zlib.error`)."""
    data = bytearray(result_zip(passing(token)))
    start = _data_start(data)
    size = struct.unpack_from("<I", data, 18)[0]
    data[start : start + size] = b"\xff" * size
    return bytes(data)


def encrypted(token: str) -> bytes:
    """The result file flagged as encrypted (general purpose bit 0): `RuntimeError`, a
    password being required."""
    return _headers_changed(result_zip(passing(token)), flags=0x1)


def deflate64(token: str) -> bytes:
    """The result file said to be compressed with Deflate64 (method 9), which `zipfile` does
    not implement: `NotImplementedError`."""
    return _headers_changed(result_zip(passing(token)), method=9)


UNREADABLE: dict[str, Callable[[str], bytes]] = {
    "corrupt deflate": corrupt_deflate,
    "encrypted entry": encrypted,
    "deflate64": deflate64,
}
"""Unreadable artifacts by what is wrong with them, each made for a run's token."""


def _data_start(data: bytearray) -> int:
    assert data.startswith(LOCAL_HEADER)
    name, extra = struct.unpack_from("<HH", data, 26)
    return 30 + int(name) + int(extra)


def _headers_changed(archive: bytes, *, flags: int = 0, method: int | None = None) -> bytes:
    """`archive` (one member) with bits set in its flags, or its method changed, in its local
    header and its central directory alike."""
    data = bytearray(archive)
    central = data.index(CENTRAL_HEADER)
    for flag_at in (6, central + 8):
        data[flag_at : flag_at + 2] = struct.pack(
            "<H", struct.unpack_from("<H", data, flag_at)[0] | flags
        )
        if method is not None:
            data[flag_at + 2 : flag_at + 4] = struct.pack("<H", method)
    return bytes(data)
