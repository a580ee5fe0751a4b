"""One attempt at one review unit, as it reads and writes Redis: in as few round trips as its
guarantees allow, since each costs the worker's event loop (shared by every unit it debates)
about a tenth of a millisecond.

    start      its plan, status, heartbeat and journal read in one pipeline; its first beat
               and its status written in one transaction, with its first call's reservation
               for a fresh attempt (one that replays its journal writes them at once)
    each call  what the last call left staged (its journal entry, its reservation settled,
               the unit's status) and this call's reservation (one script, on every pool at
               once), in one transaction; the agent shown active by the script as it grants
               the reservation (not while the call waits in line, nor when it is refused)
    end        what was staged, its status, its outcome (the first attempt's kept) and the
               coordinator's wake-up in one transaction

What may wait (the journal entry the engine appends after every call, the status after a
call, a reservation settled) is staged and rides with the attempt's next write, whichever
comes first: the next agent's status, the next reservation, or the end. So a reservation given
back is given back before the next one is checked, and the journal holds every answered call
before the next call starts (a worker that dies in between asks that call again). Nothing
staged waits on a model call, and an agent is shown active before its call starts.
"""

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from agents.debate.journal import JournalEntry
from agents.outcome import Outcome
from app.store import keys
from app.store.allowance import RESERVE, Held, Scripts, TokenCounter, queue_adjust, reserve_call
from app.store.ceiling_line import PlaceInLine, Shown
from app.store.live import LiveRuns, RedisJournal
from app.store.packed import unpack
from app.store.plans import UnitPlan
from app.store.records import HashFields, UnitStatus
from app.store.redis_typing import reply, text

Queue = Callable[[Pipeline], object]
"""Queues commands on a transaction."""


@dataclass(frozen=True, slots=True)
class UnitStart:
    """What an attempt reads before it starts: its unit's plan (None: the run has ended), its
    status, the attempt whose heartbeat is alive (None: none), and the unit's journal."""

    plan: UnitPlan | None
    status: UnitStatus
    beating: str | None
    recorded: list[JournalEntry]


class UnitJournal(RedisJournal):
    """The unit's journal, its entries read with the attempt's start, and each entry
    staged, to be appended with the attempt's next write."""

    def __init__(self, writes: "UnitWrites", recorded: list[JournalEntry] | None) -> None:
        super().__init__(writes.redis, keys.journal(writes.run, writes.number), ttl=keys.LIVE_TTL)
        self.writes = writes
        self._recorded = recorded
        """Read with the attempt's start, given once; None: read from Redis."""

    async def entries(self) -> list[JournalEntry]:
        if self._recorded is not None:  # read at the start, before anything was appended
            recorded, self._recorded = self._recorded, None
            return recorded
        return await super().entries()

    async def append(self, entry: JournalEntry) -> None:
        # Durable before the next call starts: the next call's reservation is that write (or
        # the attempt's end is, when no call follows).
        def queue(pipe: Pipeline) -> None:
            pipe.rpush(self.key, entry.model_dump_json())
            pipe.expire(self.key, self.ttl)

        self._recorded = None
        self.writes.later(queue)


class UnitWrites:
    """The reads and writes of attempt `attempt` at unit `number` of run `run`; a
    :class:`~app.store.allowance.Ledger` for its reservations."""

    def __init__(self, live: LiveRuns, run: str, number: int, attempt: int) -> None:
        self.live = live
        self.redis: Redis = live.redis
        self.run = run
        self.number = number
        self.attempt = attempt
        self._status: HashFields = {}
        self._adjusts: list[tuple[Sequence[TokenCounter], int, Held | None]] = []
        self._later: list[Queue] = []
        self._scripts = Scripts(self.redis)
        self.journal = UnitJournal(self, None)

    # -- the start --------------------------------------------------------------------

    async def read(self) -> UnitStart:
        """The unit's plan, status, live heartbeat and journal, in one pipeline."""
        run, n = self.run, self.number
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(keys.unit_plan(run, n))
            pipe.hgetall(keys.unit(run, n))
            pipe.get(keys.unit_heartbeat(run, n))
            pipe.lrange(keys.journal(run, n), 0, -1)
            plan, status, beat, journal = await pipe.execute()
        recorded = [JournalEntry.model_validate_json(raw) for raw in journal]
        self.journal = UnitJournal(self, recorded)
        return UnitStart(
            plan=None if plan is None else unpack(UnitPlan, plan),
            status=UnitStatus.read_unit(n, status),
            beating=None if beat is None else text(beat),
            recorded=recorded,
        )

    @contextlib.asynccontextmanager
    async def running(self, status: UnitStatus, *, at_once: bool = True) -> AsyncIterator[None]:
        """Start the attempt (its first heartbeat and `status`, in one transaction) and keep
        it beating while the block runs. Not `at_once`: the start is written with the
        attempt's next write, which comes before anything else it does (a fresh debate's
        first reservation): a round trip fewer."""
        beat = keys.unit_heartbeat(self.run, self.number)

        def first_beat(pipe: Pipeline) -> None:
            pipe.set(beat, str(self.attempt), px=self.live.heartbeat_ms)

        if at_once:
            await self.write(first_beat, status)
        else:
            self.later(first_beat)
            self.stage(status)
        async with self.live.beating_unit(self.run, self.number, self.attempt, beaten=True):
            yield

    def place(self) -> PlaceInLine:
        """Where the attempt's calls stand in the line for the run's ceiling: ranked by the
        unit's number (riskiest first), for as long as its heartbeat names the attempt."""
        run, n = self.run, self.number
        beat = keys.unit_heartbeat(run, n)
        line = keys.line(run)
        return PlaceInLine(keys.held(run), line, n, beat, str(self.attempt), keys.line_wake(run))

    # -- each call --------------------------------------------------------------------

    def shown(self, status: UnitStatus) -> Shown:
        """`status` as a reservation shows it once granted (:class:`Shown`)."""
        fields = {**status.fields(), keys.UnitField.UPDATED: time.time()}
        return Shown(keys.unit(self.run, self.number), fields, keys.LIVE_TTL)

    def stage(self, status: UnitStatus) -> None:
        """The fields set on `status`, written with the attempt's next write."""
        self._status.update(status.fields())

    def later(self, queue: Queue) -> None:
        """Commands written with the attempt's next write, in the order they were staged."""
        self._later.append(queue)

    async def set(self, status: UnitStatus) -> None:
        """Write the fields set on `status` now, with what was staged."""
        if self._status or self._adjusts or self._later:
            await self.write(None, status)
            return
        # Alone, one command: the unit's hash lives on (its time to live is renewed by the
        # writes that follow every call), and a transaction would cost a third more.
        fields = {**status.fields(), keys.UnitField.UPDATED: time.time()}
        await reply(self.redis.hset(keys.unit(self.run, self.number), mapping=fields))

    async def reserve(self, counters: Sequence[TokenCounter], tokens: int) -> bool:
        return await self.evaluate(RESERVE, *reserve_call(counters, tokens)) == 1

    async def evaluate(
        self, script: str, script_keys: Sequence[str], args: Sequence[int | str]
    ) -> int:
        if not self._status and not self._adjusts and not self._later:
            return await self._scripts.evaluate(script, script_keys, args)
        # What was given back is given back before the caps are checked, in one transaction.
        answer, *_ = await self.write(
            lambda pipe: pipe.eval(script, len(script_keys), *script_keys, *map(str, args))
        )
        return int(answer)

    async def adjust(
        self, counters: Sequence[TokenCounter], tokens: int, held: Held | None = None
    ) -> None:
        """Staged, to ride with the attempt's next write: after a call answered, the journal
        entry the engine appends next."""
        self._adjusts.append((counters, tokens, held))

    # -- the end ----------------------------------------------------------------------

    async def complete(self, outcome: Outcome, status: UnitStatus) -> bool:
        """Keep the unit's outcome (the first attempt to finish wins), mark it with `status`
        and wake the coordinator, in one transaction. Return whether this outcome was kept
        (False: an earlier attempt's was)."""
        kept = keys.outcome(self.run, self.number)

        def queue(pipe: Pipeline) -> None:
            pipe.set(kept, outcome.model_dump_json(), ex=keys.LIVE_TTL, nx=True)
            self._wake(pipe)

        saved, *_ = await self.write(queue, status)
        return bool(saved)

    async def fail(self, status: UnitStatus) -> None:
        """Mark the unit with `status` and wake the coordinator (it ended without an
        outcome), in one transaction."""
        await self.write(self._wake, status)

    def _wake(self, pipe: Pipeline) -> None:
        done = keys.done(self.run)
        pipe.rpush(done, self.number)
        pipe.expire(done, keys.LIVE_TTL)

    # -- the transaction ----------------------------------------------------------------

    async def write(
        self, queue: Queue | None = None, status: UnitStatus | None = None
    ) -> list[Any]:
        """One transaction: what was staged and the fields set on `status`, then `queue`'s
        commands (a status a script of theirs sets stands over the staged one); return the
        replies of `queue`'s commands."""
        fields = {**self._status, **(status.fields() if status else {})}
        adjusts, later = self._adjusts, self._later
        # Cleared before the write: should it fail, a settled reservation stays counted, as
        # for a worker that died, rather than being given back twice.
        self._status, self._adjusts, self._later = {}, [], []
        unit = keys.unit(self.run, self.number)
        async with self.redis.pipeline(transaction=True) as pipe:
            for counters, tokens, held in adjusts:
                queue_adjust(pipe, counters, tokens, held)
            for staged_queue in later:
                staged_queue(pipe)
            if fields:
                pipe.hset(unit, mapping={**fields, keys.UnitField.UPDATED: time.time()})
                pipe.expire(unit, keys.LIVE_TTL)
            staged = len(pipe.command_stack)
            if queue is not None:
                queue(pipe)
            replies: list[Any] = await pipe.execute()
        return replies[staged:]
