"""A counter that counts only up to its cap: what a review may run, what a pull request may
have heard, counted in Redis so that every process of the fleet counts against one figure."""

from redis.asyncio import Redis


async def count_within(redis: Redis, key: str, cap: int, ttl: int) -> bool:
    """Count one more at `key` (kept `ttl` seconds); False, and nothing counted, past `cap`."""
    async with redis.pipeline(transaction=True) as pipe:
        pipe.incr(key)
        pipe.expire(key, ttl)
        count, _ = await pipe.execute()
    if int(count) > cap:
        await redis.decr(key)
        return False
    return True
