"""Models as Redis keeps the large ones: JSON, compressed with zlib.

A diff and a debate's prose compress several times over, and a pull request's diff can run to
tens of megabytes: what holds one is stored packed, never as plain text.
"""

import zlib
from typing import TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

LEVEL = 6
"""zlib's default trade of speed for size."""


def pack(model: BaseModel) -> bytes:
    return zlib.compress(model.model_dump_json().encode(), LEVEL)


def unpack(model: type[M], data: bytes) -> M:
    """The model `data` holds, packed or (as written before it was packed) plain JSON."""
    if data[:1] != b"{":
        data = zlib.decompress(data)
    return model.model_validate_json(data)


def pack_text(text: str) -> bytes:
    return zlib.compress(text.encode(), LEVEL)


def unpack_text(data: bytes) -> str:
    return zlib.decompress(data).decode()
