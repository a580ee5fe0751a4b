"""Connecting to Redis, and what a store call raises when Redis fails.

The web server and the CLI reach Redis only through :mod:`app.store`; they catch
:data:`STORE_ERRORS` to answer 503 or say that Redis cannot be reached.
"""

from typing import TypeAlias
from urllib.parse import urlsplit

from arq.connections import ArqRedis
from redis.exceptions import RedisError

Pool: TypeAlias = ArqRedis
"""A pool of connections to Redis, as :func:`connect` makes it: what the stores are built on,
named for the modules that hold one without speaking to Redis themselves."""

STORE_ERRORS = (RedisError, OSError)
"""What any store call raises when Redis cannot be reached, times out (`TimeoutError` is an
`OSError`) or fails a command."""


def connect(url: str, *, timeout: float | None) -> ArqRedis:
    """A pool of connections to the Redis at `url`, able to enqueue jobs, each connection
    made and each reply read within `timeout` seconds (None: as long as Redis takes), or
    `TimeoutError` (one of :data:`STORE_ERRORS`). Connections are made as calls need them: a
    Redis that is down when the pool is made fails the calls, not the pool. Close it with
    `aclose()`.

    The bound suits a caller that must answer in time and makes only short calls: one that
    blocks on Redis on purpose (a worker's wait for wake-ups, arq's reads) would be cut by it.
    """
    redis: ArqRedis = ArqRedis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    return redis


async def answering(url: str, within: float) -> None:
    """Return once the Redis at `url` answers a PING within `within` seconds; else raise
    one of :data:`STORE_ERRORS`: how a process that cannot work without Redis checks before
    it starts."""
    redis = connect(url, timeout=within)
    try:
        await redis.ping()
    finally:
        await redis.aclose()


def without_credentials(url: str) -> str:
    """`url` as it may be shown: without the user name and password it may hold."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
