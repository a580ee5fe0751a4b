"""What Redis remembers of people's replies on finding threads: each taken up once, and how
many a pull request has had heard, against the config's cap."""

from arq.connections import ArqRedis

from app.events import PullKey
from app.store import keys


class Hearings:
    def __init__(self, redis: ArqRedis) -> None:
        self.redis = redis

    async def take_up(self, pull: PullKey, comment_id: int) -> bool:
        """Whether this is the first time the reply `comment_id` is taken up: a redelivery,
        or a second job for the same comment, gets False."""
        first = await self.redis.set(
            keys.reply_seen(pull, comment_id), "1", nx=True, ex=keys.HEARD_TTL
        )
        return bool(first)

    async def within_cap(self, pull: PullKey, cap: int) -> bool:
        """Count one more reply heard on the pull request; False (and not counted) once
        `cap` replies have been."""
        key = keys.replies_heard(pull)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, keys.HEARD_TTL)
            heard, _ = await pipe.execute()
        if int(heard) > cap:
            await self.redis.decr(key)
            return False
        return True

    async def note_cap_once(self, pull: PullKey) -> bool:
        """Whether the note that the cap is reached is still to be posted (True once)."""
        first = await self.redis.set(keys.replies_capped(pull), "1", nx=True, ex=keys.HEARD_TTL)
        return bool(first)
