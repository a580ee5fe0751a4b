"""Awaiting independent calls at once, failing as the first of them fails.

`asyncio.gather` leaves the others running when one raises; a `TaskGroup` wraps what was
raised in an `ExceptionGroup`, which the jobs' catch-alls would report as something else. Here
the first error is raised as it is, once the others are cancelled and have ended, as
:func:`dropped` lets go of any calls under way that a step no longer needs.
"""

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar, overload

A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")
E = TypeVar("E")


@overload
async def together(a: Awaitable[A], b: Awaitable[B], /) -> tuple[A, B]: ...


@overload
async def together(a: Awaitable[A], b: Awaitable[B], c: Awaitable[C], /) -> tuple[A, B, C]: ...


@overload
async def together(
    a: Awaitable[A], b: Awaitable[B], c: Awaitable[C], d: Awaitable[D], /
) -> tuple[A, B, C, D]: ...


@overload
async def together(
    a: Awaitable[A], b: Awaitable[B], c: Awaitable[C], d: Awaitable[D], e: Awaitable[E], /
) -> tuple[A, B, C, D, E]: ...


async def together(*calls: Awaitable[Any]) -> tuple[Any, ...]:
    """The results of `calls`, awaited concurrently, in their order."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return tuple(await asyncio.gather(*tasks))
    except BaseException:
        await dropped(*tasks)
        raise


async def dropped(*calls: "asyncio.Future[Any]") -> None:
    """Let go of calls under way that are no longer needed: cancelled, and awaited to their
    end whatever they came to (a failure of theirs is no one's)."""
    for call in calls:
        call.cancel()
    await asyncio.gather(*calls, return_exceptions=True)
