"""The stores' pool on a real Redis: a connection idle in it goes to the next call at once,
one the server closed meanwhile is made again before the call is sent, and what its
connections send is what redis-py would send."""

import asyncio

import pytest
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from app.store.connection import PackedConnection, connect
from app.store.redis_typing import reply

COMMANDS = [
    ("GET", "tiebreak:run:1"),
    ("HSET", "tiebreak:unit:1", "state", "active", "calls", 3, "beat", 1795913391.936441),
    ("SET", "tiebreak:plan", b"\x00\xff" * 3000, "EX", 7200),
    ("INCRBY", "tiebreak:spent", -7496),
    ("EVALSHA", "a" * 40, 2, "k1", "k2", "r\u00e9sum\u00e9", 0.1, 10**20),
    ("CONFIG GET", "maxmemory"),
    (b"CLIENT ID",),
    ("SET", "k", memoryview(b"viewed")),
]


async def test_an_idle_connection_is_handed_out_without_a_turn_of_the_loop(
    redis_url: str,
) -> None:
    redis = connect(redis_url, timeout=5.0)
    try:
        await redis.ping()  # a connection made, then left idle in the pool
        others: list[str] = []
        asyncio.get_running_loop().call_soon(others.append, "ran")

        connection = await redis.connection_pool.get_connection()
        # Nothing else ran meanwhile: every call of the process at once would otherwise queue
        # through the pool's lock, a turn of the loop each.
        assert others == []
        await redis.connection_pool.release(connection)
    finally:
        await redis.aclose()


async def test_a_connection_the_server_closed_is_made_again_before_the_next_call(
    redis_url: str,
) -> None:
    redis = connect(redis_url, timeout=5.0)
    try:
        first = await redis.client_id()
        await redis.set("kept", "1")
        # Another client closes it, as a server's idle timeout or a failover would.
        async with connect(redis_url, timeout=5.0) as other:
            assert await other.client_kill_filter(_id=first) == 1
        await asyncio.sleep(0.05)  # the loop reads the end of the stream meanwhile

        assert await redis.get("kept") == b"1"
        assert await redis.client_id() != first
    finally:
        await redis.aclose()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: str(c[0]))
def test_a_command_is_sent_as_redis_py_sends_it(command: tuple[object, ...]) -> None:
    pool = connect("redis://127.0.0.1:6379", timeout=1.0).connection_pool
    ours = pool.connection_class(**pool.connection_kwargs)  # as the pool makes each one
    assert isinstance(ours, PackedConnection)
    packed = ours.pack_command(*command)  # type: ignore[arg-type]
    theirs = Connection().pack_command(*command)  # type: ignore[arg-type]
    assert b"".join(packed) == b"".join(bytes(piece) for piece in theirs)


@pytest.mark.parametrize("value", [None, True, bytearray(b"x")], ids=repr)
async def test_a_value_redis_py_refuses_is_refused_before_anything_is_sent(
    redis_url: str, value: object
) -> None:
    redis = connect(redis_url, timeout=5.0)
    try:
        with pytest.raises(DataError):
            await redis.set("refused", value)  # type: ignore[arg-type]
        assert await redis.exists("refused") == 0
        assert await redis.ping()  # the connection is still fit for the next call
    finally:
        await redis.aclose()


async def test_values_of_every_kind_come_back_as_they_were_written(redis_url: str) -> None:
    redis = connect(redis_url, timeout=5.0)
    try:
        async with redis.pipeline(transaction=True) as pipe:
            pipe.hset("kinds", mapping={"text": "r\u00e9sum\u00e9", "count": 3, "at": 0.25})
            pipe.set("blob", b"\x00\xff" * 40_000)
            pipe.incrby("counter", -7)
            await pipe.execute()
        assert await reply(redis.hgetall("kinds")) == {
            b"text": "r\u00e9sum\u00e9".encode(),
            b"count": b"3",
            b"at": b"0.25",
        }
        assert await redis.get("blob") == b"\x00\xff" * 40_000
        assert await redis.get("counter") == b"-7"
        # A command named in two words, which Redis would not know as one.
        assert len(await redis.config_get("appendonly")) == 1
    finally:
        await redis.aclose()
