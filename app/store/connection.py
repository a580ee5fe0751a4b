"""Connecting to Redis, and what a store call raises when Redis fails.

The web server and the CLI reach Redis only through :mod:`app.store`; they catch
:data:`STORE_ERRORS` to answer 503 or say that Redis cannot be reached.
"""

from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from redis.exceptions import RedisError

STORE_ERRORS = (RedisError, OSError)
"""What any store call raises when Redis cannot be reached, times out (`TimeoutError` is an
`OSError`) or fails a command."""


async def connect(url: str) -> ArqRedis:
    """A pool of connections to the Redis at `url`, able to enqueue jobs. Close it with
    `aclose()`."""
    return await create_pool(RedisSettings.from_dsn(url))
