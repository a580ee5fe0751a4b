"""A run's units waiting their turn for room under the run's token ceiling, wherever they run.

A unit's call reserves its worst case on its run's ceiling and its installation's day at once
(:mod:`app.store.allowance`). When it does not fit beside the calls under way but would once
they settle (their reservations are upper estimates), it waits in the run's line rather than
end its unit at the ceiling, as calls do in one process (:class:`policies.budget.TokenCeiling`).
It is refused at once when it could not fit even with nothing under way (the ceiling is
spent), or when the day cannot cover it (a day's allowance is never waited for).

- Under way: each reservation is listed in the run's `held` hash (:mod:`app.store.keys`) with
  its tokens and its lease, its unit's heartbeat key and the attempt it names. A reservation
  whose lease has lapsed (its worker died, or its attempt was given up for a fresh one) is
  no longer waited for, and its tokens stay counted as spent: its call may have been billed,
  and a reservation never settled always erred on the side of spending less.
- The line: a waiting call is listed in the run's `line` hash with its rank (its unit's
  number: a run numbers its units riskiest first) and its lease. The lowest rank is served
  first, and a call that would fit joins the line when a call of a lower rank waits, so a
  later unit never takes the room a riskier one waits for. Entries whose lease has lapsed
  are dropped by whoever looks next.
- Wake-up: a waiting call blocks on a list of its own (:func:`app.store.keys.line_wake`),
  which whatever may make room pushes to: a reservation settled, a call leaving the line
  (served, refused or cancelled: the one behind it may be next), an entry whose lease lapsed
  dropped. It then asks again, one script run. A dead holder's lapse sends no message: a
  waiting call asks again at the latest every :data:`POLL` seconds all the same. A call
  cancelled (the unit stopped) leaves the line.

Every check and write is one Lua script, :data:`TAKE` (:data:`app.store.allowance.LEAVE` for
a settlement or a cancelled call), atomic as the other reservations are.
"""

import asyncio
import itertools
import json
import secrets
from collections.abc import Sequence
from typing import NamedTuple

from app.store.allowance import LEAVE, Held, Ledger, Pool, RunCeiling, TokenCounter, settlement
from app.store.records import HashFields
from app.store.redis_typing import reply
from policies.budget import Settle
from policies.errors import AllowanceExhausted, CeilingReached, OutOfTokens

POLL = 1.0
"""Seconds a waiting call waits for a wake-up before it asks again: only a holder whose lease
lapsed (its worker died) makes room without waking it, and that lease is seconds long."""

TAKE = """
local n = #KEYS - 2
local held, line = KEYS[n + 1], KEYS[n + 2]
local tokens = tonumber(ARGV[1])
local holder, entry, wake = ARGV[2 * n + 2], ARGV[2 * n + 3], ARGV[2 * n + 4]
local function alive(lease)
    return redis.call('GET', lease.beat) == lease.attempt
end
local function wake_all()
    for _, waiting in ipairs(redis.call('HKEYS', line)) do
        local key = wake .. waiting
        redis.call('RPUSH', key, 1)
        redis.call('LTRIM', key, 0, 0)
        redis.call('EXPIRE', key, ARGV[3])
    end
end
local function leave()
    redis.call('DEL', wake .. holder)
    if redis.call('HDEL', line, holder) == 1 then
        wake_all()
    end
end
local function reserve()
    for i = 1, n do
        redis.call('INCRBY', KEYS[i], tokens)
        redis.call('EXPIRE', KEYS[i], ARGV[2 * i + 1])
    end
    leave()
    redis.call('HSET', held, holder, entry)
    redis.call('EXPIRE', held, ARGV[3])
    local shown = 2 * n + 5
    if #ARGV > shown + 1 then
        redis.call('HSET', ARGV[shown], unpack(ARGV, shown + 2))
        redis.call('EXPIRE', ARGV[shown], ARGV[shown + 1])
    end
    return 1
end
for i = 2, n do
    if tonumber(redis.call('GET', KEYS[i]) or '0') + tokens > tonumber(ARGV[2 * i]) then
        leave()
        return -i
    end
end
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local cap = tonumber(ARGV[2])
local others = redis.call('HLEN', line) - redis.call('HEXISTS', line, holder)
if others == 0 and spent + tokens <= cap then
    return reserve()
end
local under_way = 0
local lapsed = false
local listed = redis.call('HGETALL', held)
for i = 1, #listed, 2 do
    local hold = cjson.decode(listed[i + 1])
    if alive(hold) then
        under_way = under_way + hold.tokens
    else
        redis.call('HDEL', held, listed[i])
        lapsed = true
    end
end
local rank = cjson.decode(entry).rank
local ahead = false
local waiting = redis.call('HGETALL', line)
for i = 1, #waiting, 2 do
    local other = cjson.decode(waiting[i + 1])
    if not alive(other) then
        redis.call('HDEL', line, waiting[i])
        redis.call('DEL', wake .. waiting[i])
        lapsed = true
    elseif waiting[i] ~= holder and (other.rank < rank
            or (other.rank == rank and waiting[i] < holder)) then
        ahead = true
    end
end
if lapsed then
    -- What lapsed no longer holds room nor a place: those waiting look again.
    wake_all()
end
if spent - under_way + tokens > cap then
    leave()
    return -1
end
if ahead or spent + tokens > cap then
    redis.call('HSET', line, holder, entry)
    redis.call('EXPIRE', line, ARGV[3])
    return 0
end
return reserve()
"""
"""Reserves ARGV[1] tokens for `holder` on the run's counter KEYS[1] and the other counters
(KEYS[2..n], each capped by ARGV[2i] and living ARGV[2i+1] seconds), listing the reservation
in KEYS[n+1] (1), and then sets the fields that follow `wake` (a hash, its time to live,
then its fields and values: what the call shows, its agent asking) when there are any; or
lists the call in the line KEYS[n+2] to wait (0); or, changing nothing but the line, refuses:
-i when counter i cannot cover the call, the run's even with nothing under way. `entry`
(JSON) is the call's tokens, rank and lease; `wake` the prefix of the waiting calls' wake-up
lists, each pushed when the call leaves the line or an entry lapses. A call that fits with no
other call in line is reserved without reading the lists: what most calls cost stays a few
commands, however many calls are under way."""

RESERVED, WAIT = 1, 0


class Shown(NamedTuple):
    """What a call shows once its reservation is granted, written by the script that grants
    it: `fields` set on the hash `key` (a unit's status: the agent asking), which then lives
    `ttl` seconds. Not before: a call waiting in line, or refused, shows nothing new."""

    key: str
    fields: HashFields
    ttl: int


class PlaceInLine(NamedTuple):
    """Where one unit's attempt stands in its run's line: the run's lists, the unit's rank,
    and the lease that keeps its reservations and its place (the heartbeat key of the unit,
    naming the attempt while it lives)."""

    held: str
    line: str
    rank: int
    beat: str
    attempt: str
    wake: str
    """The prefix of the line's wake-up lists (:func:`app.store.keys.line_wake`)."""


class RunPools:
    """An :class:`~policies.budget.Allowance` of one unit's calls: its run's `ceiling`, which
    a call waits its turn for, and the `others` (the installation's day), which refuse at once;
    reserved on all at once and settled on all in one write, through `ledger`."""

    def __init__(
        self,
        ledger: Ledger,
        ceiling: RunCeiling,
        *others: Pool,
        place: PlaceInLine,
        poll: float = POLL,
    ) -> None:
        self.ledger = ledger
        self.ceiling = ceiling
        self.others = others
        self.place = place
        self.poll = poll
        self._job = secrets.token_hex(4)
        """Tells this job's calls from those of another job at the same attempt (a unit
        taken up again once its tests ran), whose reservations may still be listed."""
        self._calls = itertools.count()
        self._shown: Shown | None = None

    def show(self, shown: Shown) -> None:
        """Have the next reservation, once granted, write `shown` with it."""
        self._shown = shown

    async def reserve(self, tokens: int) -> Settle:
        """Reserve `tokens` on every pool once the run's ceiling has room for them, in turn;
        raise what refused them (:class:`CeilingReached`: the run's ceiling is spent). What
        :meth:`show` was given is written as the reservation is granted."""
        place, shown, self._shown = self.place, self._shown, None
        holder = f"{place.rank}:{place.attempt}:{self._job}:{next(self._calls):06d}"
        counters = [self.ceiling.counter(), *(p.counter() for p in self.others)]
        script_keys, args = take_call(counters, tokens, holder, place, shown)
        redis = self.ceiling.redis
        try:
            answer = await self.ledger.evaluate(TAKE, script_keys, args)
            while answer == WAIT:
                # Woken when room may have been made, or after `poll` seconds at the latest.
                # Redis takes a decimal timeout, where redis-py's annotation says whole.
                woken = redis.blpop([place.wake + holder], timeout=self.poll)  # type: ignore[arg-type]
                await reply(woken)
                answer = await self.ledger.evaluate(TAKE, script_keys, args)
        except asyncio.CancelledError:
            # The unit stopped: out of the line at once, the next in line told. Should the
            # unit fail otherwise (Redis cut off), its entry lapses with the unit's heartbeat.
            leaving = (place.line, place.line, holder, place.wake, str(self.ceiling.ttl))
            await reply(redis.eval(LEAVE, 2, *leaving))
            raise
        if answer == RESERVED:
            held = Held(place.held, holder, place.line, place.wake, self.ceiling.ttl)
            return settlement(self.ledger, counters, tokens, held)
        raise await self._refusal(-answer, tokens)

    async def _refusal(self, counter: int, tokens: int) -> OutOfTokens:
        """Why the `counter`th counter (from 1, the run's) refused `tokens`."""
        if counter == 1:
            return CeilingReached(await self.ceiling.spent(), 0, tokens, self.ceiling.cap)
        refused = await self.others[counter - 2].refusal(tokens)
        # Refused by a day whose reservations settled lower since: it refused all the same.
        return refused or AllowanceExhausted(tokens)


def take_call(
    counters: Sequence[TokenCounter],
    tokens: int,
    holder: str,
    place: PlaceInLine,
    shown: Shown | None = None,
) -> tuple[list[str], list[int | str]]:
    """The keys and arguments of :data:`TAKE` for `holder`'s call of `tokens`, which shows
    `shown` once it is reserved."""
    if tokens <= 0:
        raise ValueError(f"a reservation needs a positive number of tokens, got {tokens}")
    entry = {"tokens": tokens, "rank": place.rank, "beat": place.beat, "attempt": place.attempt}
    args: list[int | str] = [tokens, *(n for c in counters for n in (c.cap, c.ttl))]
    args += [holder, json.dumps(entry), place.wake]
    if shown is not None and shown.fields:
        args += [shown.key, shown.ttl, *(str(x) for pair in shown.fields.items() for x in pair)]
    return [*(c.key for c in counters), place.held, place.line], args
