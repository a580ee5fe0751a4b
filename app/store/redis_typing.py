"""Replies of redis-py's asyncio client, typed: its commands are typed as maybe-awaitable."""

import inspect
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


def text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def reply(value: Awaitable[T] | T) -> T:
    """The reply of a Redis command (redis-py types them as maybe-awaitable)."""
    return await value if inspect.isawaitable(value) else value
