"""The stores' pool on a real Redis: a connection idle in it goes to the next call at once,
and one the server closed meanwhile is made again before the call is sent."""

import asyncio

from app.store.connection import connect


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
