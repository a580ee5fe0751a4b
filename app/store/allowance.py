"""An installation's daily token allowance, kept in Redis and shared by all of its reviews.

Every model call reserves its worst-case size here before it starts and settles with what it
really used. A reservation counts as spent until it is settled, and the check and the
reservation are one Lua script, so concurrent reviews of one installation, in one worker or
many, can never pass the cap together. A worker that dies mid-call never settles: its
reservation stays counted for that day, which errs on the side of spending less.

The day is the UTC day. Each installation and day has its own counter (:mod:`app.store.keys`),
which expires two days after its last write, so yesterday's counter is still there for a call
that settles after midnight.
"""

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

from redis.asyncio import Redis

from app.store import keys
from policies.budget import Settle

# Refuses, leaving the counter untouched, when the reservation would pass the cap; otherwise
# reserves and returns 1. GET then INCRBY is safe here because a script runs atomically.
_RESERVE = """
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
if spent + tonumber(ARGV[1]) > tonumber(ARGV[2]) then
    return 0
end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


def utc_now() -> datetime:
    return datetime.now(UTC)


class TokenPool:
    """Tokens reserved and settled on Redis counters, never past `cap` on any one of them.

    A reservation counts as spent until settled; the check and the reservation are one Lua
    script, so any number of callers, in one worker or many, cannot pass the cap together.
    """

    def __init__(self, redis: Redis, cap: int, *, ttl: int = keys.ALLOWANCE_TTL) -> None:
        if cap < 0:
            raise ValueError(f"a token pool cannot be negative, got {cap}")
        self.redis = redis
        self.cap = cap
        self.ttl = ttl
        self._reserve = redis.register_script(_RESERVE)

    async def reserve_on(self, key: str, tokens: int) -> Settle | None:
        """Reserve `tokens` on the counter `key`; None, changing nothing, if that would pass the
        cap, else the function that settles the reservation with what the call used.

        Only the settle function's first call counts; later calls do nothing. It raises
        ValueError for a negative usage (before counting as that first call). Usage above the
        reservation is charged.
        """
        if tokens <= 0:
            raise ValueError(f"a reservation needs a positive number of tokens, got {tokens}")
        reserved = await self._reserve(keys=[key], args=[tokens, self.cap, self.ttl])
        if not reserved:
            return None
        settled = False

        async def settle(used: int) -> None:
            nonlocal settled
            if used < 0:
                raise ValueError(f"a call cannot use a negative number of tokens, got {used}")
            if settled:
                return
            # Marked before the write, so two concurrent calls cannot both adjust; if the write
            # fails the reservation stays counted, as for a worker that died.
            settled = True
            if used == tokens:
                return
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.incrby(key, used - tokens)
                pipe.expire(key, self.ttl)
                await pipe.execute()

        return settle

    async def spent_on(self, key: str) -> int:
        """The counter's tokens, settled usage and open reservations alike."""
        raw = await self.redis.get(key)
        return 0 if raw is None else int(raw)


class DailyAllowance(TokenPool):
    """The daily token cap of one installation, an :class:`~policies.budget.Allowance`.

    Days are UTC days read from `clock`, which must return aware datetimes. A reservation is
    settled on the day it was made, even after midnight; one that is never settled (its worker
    died) stays counted for its day.
    """

    def __init__(
        self,
        redis: Redis,
        installation_id: int,
        cap: int,
        *,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(redis, cap)
        self.installation_id = installation_id
        self._clock = clock

    async def reserve(self, tokens: int) -> Settle | None:
        """Reserve `tokens` on today's counter (see :meth:`TokenPool.reserve_on`)."""
        return await self.reserve_on(self._key(self._today()), tokens)

    async def spent(self) -> int:
        """Today's tokens, settled usage and open reservations alike."""
        return await self.spent_on(self._key(self._today()))

    async def remaining(self) -> int:
        return max(0, self.cap - await self.spent())

    def resets_at(self) -> datetime:
        """The next UTC midnight, when a fresh day's allowance starts."""
        return datetime.combine(self._today() + timedelta(days=1), time(), tzinfo=UTC)

    def _today(self) -> date:
        now = self._clock()
        if now.tzinfo is None:
            raise ValueError("the allowance's clock must return an aware datetime")
        return now.astimezone(UTC).date()

    def _key(self, day: date) -> str:
        return keys.allowance(self.installation_id, day)


class RunCeiling(TokenPool):
    """One review run's token ceiling on the counter `key`, shared by the run's units
    wherever they run."""

    def __init__(self, redis: Redis, key: str, ceiling: int, *, ttl: int) -> None:
        super().__init__(redis, ceiling, ttl=ttl)
        self.key = key

    async def reserve(self, tokens: int) -> Settle | None:
        return await self.reserve_on(self.key, tokens)

    async def spent(self) -> int:
        return await self.spent_on(self.key)
