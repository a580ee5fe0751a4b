"""Commands sent together: the calls made while one pipeline is out go to Redis as the next.

Under load the webhook endpoint answers many deliveries at once, and each makes one call to
Redis (remember the delivery and queue its job). Sent one by one, every call is a round trip
of its own: a connection taken from the pool and checked, a write, a wake-up of redis-server,
a read, and a pass of the event loop to resume the request. Sent together, the calls share
them, as a database's group commit shares a flush. A call made when nothing is out is sent on
the loop's next pass, with whatever other calls that pass brings, which costs microseconds.
Calls made while a pipeline is out wait for it to come back, then go together as the next:
the busier the endpoint, the more each pipeline carries, and it never waits for a batch to
fill. A pipeline out for longer than :data:`STALLED` (its connection stalled) is not waited
for: the calls after it go on another connection, and only its own callers wait on.

The pipeline is not a transaction: each command is atomic on its own, as it was when sent
alone, and none reads another's result. They run in the order they were made. A command that
fails fails for its caller only; a connection that fails fails every call that was on it,
as it would have failed each of them alone.
"""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

Stage = Callable[[Pipeline], object]
"""Adds one command to a pipeline (`lambda pipe: pipe.set(key, value)`)."""


STALLED = 0.05
"""Seconds a pipeline may be out before the calls made meanwhile go without it: tens of round
trips to a Redis across a network, hundreds to one on the same machine, so only a connection
that stalled is passed by."""


@dataclass(frozen=True, slots=True)
class _Call:
    stage: Stage
    reply: "asyncio.Future[Any]"


class AutoPipeline:
    """Sends the calls made while a pipeline is out as the next pipeline. One per process and
    Redis pool; the event loop is its only lock."""

    def __init__(self, redis: Redis, stalled: float = STALLED) -> None:
        self.redis = redis
        self.stalled = stalled
        self._waiting: list[_Call] = []
        self._sender: asyncio.Task[None] | None = None
        self._out: set[asyncio.Task[None]] = set()

    async def call(self, stage: Stage) -> Any:
        """The reply to the one command `stage` adds; raises what that command raised."""
        loop = asyncio.get_running_loop()
        call = _Call(stage, loop.create_future())
        self._waiting.append(call)
        if self._sender is None:
            # Its first step runs on the loop's next pass: the calls made before then go too.
            self._sender = loop.create_task(self._send_waiting())
        return await call.reply

    async def _send_waiting(self) -> None:
        """Sends what is waiting, a pipeline at a time, until nothing is."""
        loop = asyncio.get_running_loop()
        try:
            while self._waiting:
                # A caller that stopped waiting before the send has its command left out.
                calls = [call for call in self._waiting if not call.reply.done()]
                self._waiting = []
                if not calls:
                    continue
                out = loop.create_task(self._send(calls))
                self._out.add(out)
                out.add_done_callback(self._back)
                await asyncio.wait([out], timeout=self.stalled)
        except BaseException:
            # Cancelled (the loop is shutting down): so are the calls not yet sent.
            for call in self._waiting:
                call.reply.cancel()
            self._waiting = []
            raise
        finally:
            self._sender = None

    async def _send(self, calls: list[_Call]) -> None:
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for call in calls:
                    call.stage(pipe)
                replies = await pipe.execute(raise_on_error=False)
        except BaseException as exc:
            # Every caller hears it: the connection failed, or the loop is shutting down.
            for call in calls:
                _fail(call.reply, exc)
            raise
        for call, reply in zip(calls, replies, strict=True):
            if call.reply.done():
                continue  # its caller stopped waiting; the command ran all the same
            if isinstance(reply, Exception):
                call.reply.set_exception(reply)
            else:
                call.reply.set_result(reply)

    def _back(self, task: "asyncio.Task[None]") -> None:
        self._out.discard(task)
        if not task.cancelled():
            task.exception()  # its callers have it; nobody else need hear of it


def _fail(reply: "asyncio.Future[Any]", exc: BaseException) -> None:
    if reply.done():
        return
    if isinstance(exc, Exception):
        reply.set_exception(exc)
    else:
        reply.cancel()
