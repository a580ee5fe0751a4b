"""Connecting to Redis, and what a store call raises when Redis fails.

The web server and the CLI reach Redis only through :mod:`app.store`; they catch
:data:`STORE_ERRORS` to answer 503 or say that Redis cannot be reached.
"""

import asyncio
from typing import Any, TypeAlias, cast
from urllib.parse import urlsplit

import hiredis
from arq.connections import ArqRedis
from redis._parsers.hiredis import _AsyncHiredisParser
from redis.asyncio.connection import (
    AbstractConnection,
    Connection,
    ConnectionPool,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.exceptions import DataError, RedisError
from redis.typing import EncodableT

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
    pool = SettledPool.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    # redis-py types `from_pool` as making its base class; it makes the class it is called on.
    return cast(ArqRedis, ArqRedis.from_pool(pool))


class SettledPool(ConnectionPool):
    """redis-py's pool, handing out a settled connection without a turn of the event loop,
    its connections' commands packed by hiredis (:class:`PackedConnection`).

    Before each command, redis-py 5 (which arq 0.28 pins) makes sure the connection it hands
    out has nothing left to read, by a read with a zero timeout: a turn of the event loop,
    taken holding the pool's lock, so that every call of the process at once queues through
    the lock one turn each (redis-py issue 3692; 7.2 takes the check out of the lock). A
    connection that is connected and holds nothing unread, nor the end of its stream, is
    handed out at once; any other gets redis-py's own check, which reconnects one the server
    closed.
    """

    def __init__(
        self, connection_class: type[AbstractConnection] = Connection, **kwargs: Any
    ) -> None:
        packed = _PACKED.get(connection_class, connection_class)
        super().__init__(connection_class=packed, **kwargs)

    async def ensure_connection(self, connection: AbstractConnection) -> None:
        if not _settled(connection):
            await super().ensure_connection(connection)


def _settled(connection: AbstractConnection) -> bool:
    """Whether `connection` is connected and neither its parser nor its stream holds anything
    unread: what redis-py's check finds, as far as this process's loop has read (a reply still
    on its way would be one the check could miss too). Read from redis-py's and asyncio's
    members, as their versions pinned here name them; anything else is not settled."""
    parser = getattr(connection, "_parser", None)
    stream = getattr(connection, "_reader", None)
    if not isinstance(parser, _AsyncHiredisParser) or not isinstance(stream, asyncio.StreamReader):
        return False
    hiredis = getattr(parser, "_reader", None)
    return (
        connection.is_connected
        and hiredis is not None
        and not hiredis.has_data()
        and not getattr(stream, "_buffer", True)
        and not stream.at_eof()
        and stream.exception() is None
    )


class PackedConnection(AbstractConnection):
    """A connection whose commands hiredis packs into Redis's protocol, as redis-py's
    synchronous client does: redis-py 5's asyncio client packs them in Python, 2 to 9 µs a
    command against 0.3 to 2 here, on the event loop of a worker that sends thousands a review.
    What it packs is the same bytes: a value redis-py would refuse (None, a bool) raises its
    :class:`DataError`."""

    def pack_command(self, *args: EncodableT) -> list[bytes]:
        name, *rest = args
        # redis-py's rule: a command named in words ("CONFIG GET") is sent as one each.
        if isinstance(name, str):
            head: tuple[EncodableT, ...] = tuple(name.encode().split())
        elif isinstance(name, bytes) and b" " in name:
            head = tuple(name.split())
        else:
            head = (name,)
        try:
            # hiredis's stub types the command as a tuple of one item.
            return [hiredis.pack_command((*head, *rest))]  # type: ignore[arg-type]
        except TypeError as exc:
            raise DataError(str(exc)) from exc


class _PackedTCP(PackedConnection, Connection):
    pass


class _PackedSSL(PackedConnection, SSLConnection):
    pass


class _PackedUnix(PackedConnection, UnixDomainSocketConnection):
    pass


_PACKED: dict[type[AbstractConnection], type[AbstractConnection]] = {
    Connection: _PackedTCP,
    SSLConnection: _PackedSSL,
    UnixDomainSocketConnection: _PackedUnix,
}
"""The packed kind of each connection redis-py makes of a URL (`redis://`, `rediss://`,
`unix://`)."""


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
