"""An installation's daily token allowance, kept in Redis and shared by all of its reviews.

Every model call reserves its worst-case size here before it starts and settles with what it
really used. A reservation counts as spent until it is settled, and the check and the
reservation are one Lua script, so concurrent reviews of one installation, in one worker or
many, can never pass the cap together. A worker that dies mid-call never settles: its
reservation stays counted for that day, which errs on the side of spending less.

The day is the UTC day. Each installation and day has its own counter (:mod:`app.store.keys`),
which expires two days after its last write, so yesterday's counter is still there for a call
that settles after midnight.

A review's unit reserves each call on its run's ceiling and on the day's allowance together:
one script checks both caps and reserves on both, and one write settles both; its calls wait
their turn for the run's ceiling (:mod:`app.store.ceiling_line`).
"""

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import NamedTuple, Protocol

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.commands.core import AsyncScript

from app.store import keys
from policies.budget import Settle
from policies.errors import AllowanceExhausted, CeilingReached, OutOfTokens

RESERVE = """
local tokens = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
    local spent = tonumber(redis.call('GET', key) or '0')
    if spent + tokens > tonumber(ARGV[2 * i]) then
        return 0
    end
end
for i, key in ipairs(KEYS) do
    redis.call('INCRBY', key, tokens)
    redis.call('EXPIRE', key, ARGV[2 * i + 1])
end
return 1
"""
"""Reserves ARGV[1] tokens on every counter of KEYS, or, changing nothing, on none when that
would pass one's cap (ARGV[2i] for KEYS[i], which lives ARGV[2i+1] seconds); returns 1 if it
reserved. GET then INCRBY is safe here because a script runs atomically."""


def utc_now() -> datetime:
    return datetime.now(UTC)


class TokenCounter(NamedTuple):
    """A Redis counter of reserved and spent tokens, its cap and how long it lives."""

    key: str
    cap: int
    ttl: int


def reserve_call(counters: Sequence[TokenCounter], tokens: int) -> tuple[list[str], list[int]]:
    """The keys and arguments of :data:`RESERVE` reserving `tokens` on `counters`."""
    if tokens <= 0:
        raise ValueError(f"a reservation needs a positive number of tokens, got {tokens}")
    return [c.key for c in counters], [tokens, *(n for c in counters for n in (c.cap, c.ttl))]


class Held(NamedTuple):
    """A reservation listed as under way: field `field` of the hash `key`, dropped from it
    when the reservation is settled, which wakes the calls waiting in the run's `line`
    (their wake-up lists are `wake` and the waiting call's holder, living `ttl` seconds;
    :mod:`app.store.ceiling_line`)."""

    key: str
    field: str
    line: str
    wake: str
    ttl: int


LEAVE = """
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', ARGV[2] .. ARGV[1])
for _, waiting in ipairs(redis.call('HKEYS', KEYS[2])) do
    local wake = ARGV[2] .. waiting
    redis.call('RPUSH', wake, 1)
    redis.call('LTRIM', wake, 0, 0)
    redis.call('EXPIRE', wake, ARGV[3])
end
return 1
"""
"""Drops `ARGV[1]` from the hash KEYS[1] (the reservations under way, or the line itself)
and its own wake-ups, and wakes every call waiting in the line KEYS[2]: one wake-up each
(prefix ARGV[2], living ARGV[3] seconds), however often room was made before it looked."""


class Ledger(Protocol):
    """Where reservations on counters are made and settled."""

    async def evaluate(
        self, script: str, script_keys: Sequence[str], args: Sequence[int | str]
    ) -> int:
        """Run the Lua `script` on `script_keys` and `args`; return its integer reply."""
        ...

    async def adjust(
        self, counters: Sequence[TokenCounter], tokens: int, held: Held | None = None
    ) -> None:
        """Add `tokens` (fewer than zero: give them back) to every counter, and drop `held`
        from the reservations under way."""
        ...


class Scripts:
    """Lua scripts registered once on a Redis client, by their source."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._scripts: dict[str, AsyncScript] = {}

    async def evaluate(
        self, script: str, script_keys: Sequence[str], args: Sequence[int | str]
    ) -> int:
        if script not in self._scripts:
            self._scripts[script] = self.redis.register_script(script)
        return int(await self._scripts[script](keys=script_keys, args=args))


def queue_adjust(
    pipe: Pipeline, counters: Sequence[TokenCounter], tokens: int, held: Held | None
) -> None:
    """Queue on `pipe` what :meth:`Ledger.adjust` writes."""
    for counter in counters:
        pipe.incrby(counter.key, tokens)
        pipe.expire(counter.key, counter.ttl)
    if held is not None:
        pipe.eval(LEAVE, 2, held.key, held.line, held.field, held.wake, str(held.ttl))


class RedisLedger(Scripts):
    """A :class:`Ledger` writing at once: one script reserves, one transaction adjusts."""

    async def reserve(self, counters: Sequence[TokenCounter], tokens: int) -> bool:
        return await self.evaluate(RESERVE, *reserve_call(counters, tokens)) == 1

    async def adjust(
        self, counters: Sequence[TokenCounter], tokens: int, held: Held | None = None
    ) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            queue_adjust(pipe, counters, tokens, held)
            await pipe.execute()


async def reserve_all(
    ledger: Ledger, counters: Sequence[TokenCounter], tokens: int
) -> Settle | None:
    """Reserve `tokens` on every one of `counters` at once, all or nothing; None, changing
    nothing, if that would pass one's cap, else the function that settles the reservation on
    all of them with what the call used (see :func:`settlement`)."""
    if await ledger.evaluate(RESERVE, *reserve_call(counters, tokens)) != 1:
        return None
    return settlement(ledger, counters, tokens)


def settlement(
    ledger: Ledger, counters: Sequence[TokenCounter], tokens: int, held: Held | None = None
) -> Settle:
    """The function that settles a reservation of `tokens` on `counters` (listed as `held`)
    with what the call used.

    Only its first call counts; later calls do nothing. It raises ValueError for a negative
    usage (before counting as that first call). Usage above the reservation is charged.
    """
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
        if used != tokens or held is not None:
            await ledger.adjust(counters, used - tokens, held)

    return settle


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
        self._ledger = RedisLedger(redis)

    async def reserve_on(self, key: str, tokens: int) -> Settle | None:
        """Reserve `tokens` on the counter `key` (see :func:`reserve_all`)."""
        return await reserve_all(self._ledger, [TokenCounter(key, self.cap, self.ttl)], tokens)

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
        """Reserve `tokens` on today's counter (see :func:`reserve_all`)."""
        return await self.reserve_on(self._key(self._today()), tokens)

    def counter(self) -> TokenCounter:
        """Today's counter."""
        return TokenCounter(self._key(self._today()), self.cap, self.ttl)

    async def spent(self) -> int:
        """Today's tokens, settled usage and open reservations alike."""
        return await self.spent_on(self._key(self._today()))

    async def remaining(self) -> int:
        return max(0, self.cap - await self.spent())

    async def refusal(self, tokens: int) -> OutOfTokens | None:
        """Why a reservation of `tokens` was refused, if today's allowance is what refused it."""
        return AllowanceExhausted(tokens) if await self.spent() + tokens > self.cap else None

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

    def counter(self) -> TokenCounter:
        return TokenCounter(self.key, self.cap, self.ttl)

    async def spent(self) -> int:
        return await self.spent_on(self.key)

    async def refusal(self, tokens: int) -> OutOfTokens | None:
        """Why a reservation of `tokens` was refused, if the run's ceiling is what refused it."""
        held = await self.spent()
        # The counter holds spent and reserved tokens as one figure.
        return CeilingReached(held, 0, tokens, self.cap) if held + tokens > self.cap else None


class Pool(Protocol):
    """A pool with one counter to reserve on at a time (a day's, a run's)."""

    def counter(self) -> TokenCounter: ...

    async def refusal(self, tokens: int) -> OutOfTokens | None:
        """Why a reservation of `tokens` was refused, if this pool is what refused it."""
        ...
