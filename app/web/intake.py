"""Reading a webhook's body before anyone knows it is GitHub's: within a budget and a deadline.

A signature covers the whole body, so the body must be read before it can be checked, and
until then it is anyone's. The bodies a process holds share one budget of bytes: each request
reserves its declared `Content-Length` before a byte is read, and when the budget cannot hold
it the request is turned away at once (503, with `Retry-After`) instead of being buffered.
Each body must arrive whole within a deadline, or the request is answered 408 and its
connection closed, which frees what it held. So stalled uploads hold at most the budget, for
at most the deadline, however many connections carry them.

A body stays reserved until its delivery is answered, not only until it is checked: a valid
signature proves that GitHub wrote the body, not that GitHub sent it now (anyone who saw a
delivery can send it again, signed as it was), and a verified body waits on Redis, for as
long as Redis takes to answer or time out. While Redis is stalled, the deliveries waiting on
it hold at most the budget too, and those past it are answered 503 at once.

GitHub always declares a delivery's length, sends it within its own 10-second timeout, and
never sends more than 25 MB: a request without a length, with a larger one, or whose body
does not match its length is refused too.
"""

import asyncio
import contextlib
import math
import re
from collections.abc import AsyncIterator

from starlette.requests import ClientDisconnect, Request

from policies.errors import TiebreakError

MAX_BODY_BYTES = 25 * 1024 * 1024
"""GitHub does not deliver payloads above 25 MB; anything larger is not from GitHub."""

CONNECTION_FLOOR = 64 * 1024
"""The least a request reserves, whatever length it declares: uvicorn buffers about this much
of a body per connection before it stops reading, so an empty declared body is not free."""

UNKNOWN_EVENT = "unknown"

_LENGTH = re.compile(r"[0-9]{1,20}")
# Without it, uvicorn keeps the connection open after the answer and reads on whatever
# remains of an unread body.
_HANG_UP = {"Connection": "close"}


class DeliveryRefused(TiebreakError):
    """A delivery turned away: the answer's status, reason and headers, and its outcome as
    the metrics count it."""

    def __init__(
        self,
        status: int,
        reason: str,
        outcome: str,
        *,
        event: str = UNKNOWN_EVENT,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.outcome = outcome
        self.event = event
        """The delivery's event, once its signature is verified."""
        self.headers = headers or {}


class Intake:
    """The bytes that webhook bodies may hold at once in this process, and the time each has
    to arrive. Built once per process; the event loop is its only lock."""

    def __init__(self, budget: int, timeout: float) -> None:
        self.budget = budget
        self.timeout = timeout
        self._free = budget

    @contextlib.asynccontextmanager
    async def holding(self, request: Request) -> AsyncIterator[bytes]:
        """The request's whole body, counted against the budget until the block ends (when
        the delivery is answered); raises :class:`DeliveryRefused` when it may not be read.

        The caller checks the signature before it awaits anything else: until then the bytes
        are still a stranger's.
        """
        declared = _declared_length(request)
        reserved = max(declared, CONNECTION_FLOOR)
        if reserved > self._free:
            raise DeliveryRefused(
                503,
                "too many deliveries arriving at once; redeliver later",
                "busy",
                headers={"Retry-After": str(math.ceil(self.timeout)), **_HANG_UP},
            )
        self._free -= reserved
        try:
            yield await self._receive(request, declared)
        finally:
            self._free += reserved

    async def _receive(self, request: Request, declared: int) -> bytes:
        body = bytearray()
        try:
            async with asyncio.timeout(self.timeout):
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > declared:
                        raise _mismatch()
        except TimeoutError:
            raise DeliveryRefused(
                408, "the body did not arrive in time", "too_slow", headers=_HANG_UP
            ) from None
        except ClientDisconnect:
            # Nobody reads this answer; it is for the log line and the count.
            raise DeliveryRefused(400, "the client hung up mid-body", "incomplete") from None
        if len(body) != declared:
            raise _mismatch()
        return bytes(body)


def _declared_length(request: Request) -> int:
    declared = request.headers.get("content-length")
    if declared is None:
        raise DeliveryRefused(411, "Content-Length required", "bad_request", headers=_HANG_UP)
    if not _LENGTH.fullmatch(declared):
        raise DeliveryRefused(400, "malformed Content-Length", "bad_request", headers=_HANG_UP)
    if int(declared) > MAX_BODY_BYTES:
        raise DeliveryRefused(413, "payload too large", "too_large", headers=_HANG_UP)
    return int(declared)


def _mismatch() -> DeliveryRefused:
    return DeliveryRefused(
        400, "the body's length differs from its Content-Length", "bad_request", headers=_HANG_UP
    )
