"""Commands sent together: the ones made within one pass of the event loop go to Redis as one
pipeline.

Under load the webhook endpoint answers many deliveries at once, and each makes one call to
Redis (remember the delivery and queue its job). Sent one by one, every call is a round trip
of its own: a connection taken from the pool and checked, a write, a wake-up of redis-server,
a read, and a pass of the event loop to resume the request. Sent together, the calls share
them. The first call schedules a send for the loop's next pass, the calls made before it
runs join it, and the send writes them all as one pipeline and hands each caller its own
reply. A lone call waits one pass of the loop, which is microseconds.

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


@dataclass(frozen=True, slots=True)
class _Call:
    stage: Stage
    reply: "asyncio.Future[Any]"


class AutoPipeline:
    """Sends the commands made within one pass of the event loop as one pipeline. One per
    process and Redis pool; the event loop is its only lock."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._waiting: list[_Call] = []
        self._sending: set[asyncio.Task[None]] = set()

    async def call(self, stage: Stage) -> Any:
        """The reply to the one command `stage` adds; raises what that command raised."""
        loop = asyncio.get_running_loop()
        call = _Call(stage, loop.create_future())
        if not self._waiting:
            # A task's first step runs on the loop's next pass: every call made before then
            # goes with this one.
            task = loop.create_task(self._send())
            self._sending.add(task)
            task.add_done_callback(self._sent)
        self._waiting.append(call)
        return await call.reply

    async def _send(self) -> None:
        # A caller that stopped waiting before the send has its command left out.
        calls = [call for call in self._waiting if not call.reply.done()]
        self._waiting = []
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

    def _sent(self, task: "asyncio.Task[None]") -> None:
        self._sending.discard(task)
        if not task.cancelled():
            task.exception()  # its callers have it; nobody else need hear of it


def _fail(reply: "asyncio.Future[Any]", exc: BaseException) -> None:
    if reply.done():
        return
    if isinstance(exc, Exception):
        reply.set_exception(exc)
    else:
        reply.cancel()
