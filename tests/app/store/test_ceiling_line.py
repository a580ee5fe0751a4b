"""Units of one run in line for room under the run's ceiling, on a real Redis: each unit's
calls reserve through its own attempt's writes, as its job does, its heartbeat set by hand
(`beat`) so that a test can let it lapse as a dead worker's does, or kept by a process of its
own (`tests.kits.ceiling_holder`) that a test may kill."""

import asyncio
import sys
from pathlib import Path

import pytest
from arq.connections import ArqRedis

from agents.models.llm import Role
from app.store import keys
from app.store.allowance import DailyAllowance, RunCeiling
from app.store.ceiling_line import RunPools
from app.store.live import LiveRuns
from app.store.records import State, UnitStatus
from app.store.redis_typing import reply
from app.store.unit_writes import UnitWrites
from policies.budget import Settle, TokenCeiling
from policies.errors import AllowanceExhausted, CeilingReached

RUN = "run-line"
CEILING = 1000
POLL = 0.005
HEARTBEAT = 1.0
"""Seconds the other process's heartbeat lives once it stops beating."""
ROOT = Path(__file__).parents[3]


async def beat(redis: ArqRedis, n: int, attempt: int = 1) -> None:
    """Unit n's attempt alive, as its heartbeat says while its worker lives."""
    await redis.set(keys.unit_heartbeat(RUN, n), str(attempt))


class Unit:
    """Unit n's attempt 1, its ceiling made as its job makes it."""

    def __init__(
        self, redis: ArqRedis, n: int, day: DailyAllowance | None = None, *, poll: float = POLL
    ) -> None:
        self.writes = UnitWrites(LiveRuns(redis, 60.0), RUN, n, 1)
        run = RunCeiling(redis, keys.spent(RUN), CEILING, ttl=keys.LIVE_TTL)
        others = () if day is None else (day,)
        self.pools = RunPools(self.writes, run, *others, place=self.writes.place(), poll=poll)
        self.ceiling = TokenCeiling(CEILING, self.pools)

    async def take(self, tokens: int) -> Settle:
        return await self.ceiling.take(tokens)

    async def settle(self, settle: Settle, used: int) -> None:
        """Settle a call, and write what that staged, as the attempt's next write does."""
        await settle(used)
        await self.writes.write()


def unit(redis: ArqRedis, n: int, *, day: DailyAllowance | None = None) -> Unit:
    return Unit(redis, n, day)


async def in_line(redis: ArqRedis, count: int) -> None:
    """Until `count` calls wait in the run's line."""
    waiting = await reply(redis.hlen(keys.line(RUN)))
    while waiting < count:
        await asyncio.sleep(POLL)
        waiting = await reply(redis.hlen(keys.line(RUN)))


async def spent(redis: ArqRedis) -> int:
    return int(await redis.get(keys.spent(RUN)) or 0)


async def test_a_reservation_whose_holder_died_is_no_longer_waited_for(redis: ArqRedis) -> None:
    for n in (0, 1):
        await beat(redis, n)
    await unit(redis, 0).take(800)  # never settled: its worker is about to die
    waiter = asyncio.create_task(unit(redis, 1).take(300))
    await in_line(redis, 1)

    await redis.delete(keys.unit_heartbeat(RUN, 0))  # its heartbeat lapses

    with pytest.raises(CeilingReached):
        await waiter  # the dead call's 800 stay counted: 300 more cannot fit
    assert await spent(redis) == 800
    assert not await reply(redis.hlen(keys.held(RUN)))
    assert not await reply(redis.hlen(keys.line(RUN)))


async def test_a_reservation_of_an_attempt_given_up_is_no_longer_waited_for(
    redis: ArqRedis,
) -> None:
    for n in (0, 1):
        await beat(redis, n)
    await unit(redis, 0).take(500)
    waiter = asyncio.create_task(unit(redis, 1).take(600))
    await in_line(redis, 1)

    await beat(redis, 0, attempt=2)  # a fresh attempt at unit 0 took over

    with pytest.raises(CeilingReached):
        await waiter


async def test_a_ceiling_truly_spent_ends_the_call_at_once(redis: ArqRedis) -> None:
    for n in (0, 1):
        await beat(redis, n)
    first = unit(redis, 0)
    await (await first.take(700))(700)  # spent for good
    holding = await first.take(200)  # and a call under way

    with pytest.raises(CeilingReached):
        await unit(redis, 1).take(400)  # 700 + 400 > 1000 whatever the call under way uses
    assert not await reply(redis.hlen(keys.line(RUN)))
    assert await spent(redis) == 900
    await first.settle(holding, 100)
    assert await spent(redis) == 800


async def test_a_day_that_cannot_cover_a_call_ends_it_at_once_while_the_run_could_wait(
    redis: ArqRedis,
) -> None:
    for n in (0, 1):
        await beat(redis, n)
    day = DailyAllowance(redis, 77, 1200)
    await unit(redis, 0, day=day).take(800)

    with pytest.raises(AllowanceExhausted):
        await unit(redis, 1, day=day).take(500)  # the run would wait; the day cannot cover it
    assert not await reply(redis.hlen(keys.line(RUN)))


async def shown_tester(redis: ArqRedis, n: int) -> State | None:
    """How unit n's status shows its tester."""
    (status,) = await LiveRuns(redis, 60.0).units(RUN, [n])
    return status.agents.get(Role.TESTER)


async def test_a_call_shows_its_agent_active_once_granted_never_while_in_line_or_refused(
    redis: ArqRedis,
) -> None:
    for n in (0, 1, 2):
        await beat(redis, n)
    holder, waiting, refused = unit(redis, 0), unit(redis, 1), unit(redis, 2)
    asking = UnitStatus(number=1, round=2, agents={Role.TESTER: State.ACTIVE})
    settle = await holder.take(900)
    waiting.pools.show(waiting.writes.shown(asking))
    waiter = asyncio.create_task(waiting.take(600))
    await in_line(redis, 1)
    refused.pools.show(refused.writes.shown(asking.model_copy(update={"number": 2})))
    with pytest.raises(CeilingReached):
        await refused.take(2000)

    assert await shown_tester(redis, 1) is None  # waiting in line: nothing shown yet
    assert await shown_tester(redis, 2) is None
    await holder.settle(settle, 100)
    await waiter

    (status,) = await LiveRuns(redis, 60.0).units(RUN, [1])
    assert (status.agents, status.round) == ({Role.TESTER: State.ACTIVE}, 2)
    assert 0 < await reply(redis.ttl(keys.unit(RUN, 1))) <= keys.LIVE_TTL
    assert await shown_tester(redis, 2) is None


async def test_the_riskier_unit_is_served_first_when_both_wait(redis: ArqRedis) -> None:
    for n in (0, 1, 2):
        await beat(redis, n)
    served: list[int] = []
    holder, units = unit(redis, 2), {n: unit(redis, n) for n in (0, 1)}
    settle_last = await holder.take(900)

    async def ask(n: int) -> Settle:
        settle = await units[n].take(600)
        served.append(n)
        return settle

    later = asyncio.create_task(ask(1))  # unit 1 asks first,
    await in_line(redis, 1)
    riskier = asyncio.create_task(ask(0))  # then unit 0, the riskier
    await in_line(redis, 2)

    await holder.settle(settle_last, 100)  # room for one call of 600 beside the 100 spent
    settle_riskier = await riskier
    assert served == [0]
    await units[0].settle(settle_riskier, 200)
    await units[1].settle(await later, 300)

    assert served == [0, 1]
    assert await spent(redis) == 600


async def test_a_later_unit_does_not_take_the_room_a_riskier_one_waits_for(
    redis: ArqRedis,
) -> None:
    for n in (0, 1, 2):
        await beat(redis, n)
    served: list[int] = []
    holder, units = unit(redis, 2), {n: unit(redis, n) for n in (0, 1)}
    settle_holder = await holder.take(700)

    async def ask(n: int, tokens: int) -> Settle:
        settle = await units[n].take(tokens)
        served.append(n)
        return settle

    riskier = asyncio.create_task(ask(0, 900))  # waits for the 700 to settle
    await in_line(redis, 1)
    later = asyncio.create_task(ask(1, 300))  # would fit now, beside the 700: it waits too
    await in_line(redis, 2)
    assert served == []

    await holder.settle(settle_holder, 50)
    await units[0].settle(await riskier, 50)
    await units[1].settle(await later, 50)

    assert served == [0, 1]
    assert await spent(redis) == 150


async def test_a_cancelled_call_leaves_the_line_and_the_next_is_served(redis: ArqRedis) -> None:
    for n in (0, 1, 2):
        await beat(redis, n)
    holder, next_unit = unit(redis, 2), unit(redis, 1)
    settle_holder = await holder.take(900)
    stopped = asyncio.create_task(unit(redis, 0).take(800))
    await in_line(redis, 1)
    next_one = asyncio.create_task(next_unit.take(500))
    await in_line(redis, 2)

    stopped.cancel()  # `/tiebreak stop`: arq cancels unit 0's job
    with pytest.raises(asyncio.CancelledError):
        await stopped
    await holder.settle(settle_holder, 100)

    await next_unit.settle(await next_one, 100)
    assert await spent(redis) == 200
    assert not await reply(redis.hlen(keys.line(RUN)))


async def holder(redis_url: str, tokens: int) -> asyncio.subprocess.Process:
    """Unit 0 in a process of its own, once it holds `tokens` on the run's ceiling."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "tests.kits.ceiling_holder", redis_url, RUN, "0"),
        *(str(tokens), str(CEILING), str(HEARTBEAT)),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None
    assert await process.stdout.readline() == b"held\n"
    return process


async def test_a_unit_in_another_process_is_waited_for_until_it_settles(
    redis: ArqRedis, redis_url: str
) -> None:
    other = await holder(redis_url, 800)
    await beat(redis, 1)
    here = unit(redis, 1)
    waiter = asyncio.create_task(here.take(600))
    await in_line(redis, 1)

    await other.communicate(b"100\n")  # settles, and its process ends

    await here.settle(await waiter, 150)
    assert other.returncode == 0
    assert await spent(redis) == 250


async def test_a_unit_whose_process_was_killed_is_not_waited_for_forever(
    redis: ArqRedis, redis_url: str
) -> None:
    other = await holder(redis_url, 800)
    await beat(redis, 1)
    waiter = asyncio.create_task(unit(redis, 1).take(300))
    await in_line(redis, 1)

    other.kill()  # SIGKILL: no settlement, its heartbeat lapses
    await other.wait()

    with pytest.raises(CeilingReached):
        await waiter  # its 800 stay counted as spent: 300 more cannot fit
    assert not await reply(redis.hlen(keys.line(RUN)))


async def test_a_waiting_call_is_served_as_soon_as_room_is_made_not_at_its_next_poll(
    redis: ArqRedis,
) -> None:
    for n in (0, 1):
        await beat(redis, n)
    holder = unit(redis, 0)
    settle_holder = await holder.take(800)
    slow = Unit(redis, 1, poll=3600.0)  # were it to ask again only at its poll, it would wait
    waiter = asyncio.create_task(slow.take(600))
    await in_line(redis, 1)

    await holder.settle(settle_holder, 100)  # room made: the waiter is woken by it

    async with asyncio.timeout(10):
        await slow.settle(await waiter, 100)
    assert await spent(redis) == 200
    assert not await reply(redis.hlen(keys.line(RUN)))


async def test_the_next_in_line_is_woken_when_the_riskier_one_leaves_it(redis: ArqRedis) -> None:
    for n in (0, 1, 2):
        await beat(redis, n)
    holder = unit(redis, 2)
    settle_holder = await holder.take(900)
    riskier = asyncio.create_task(Unit(redis, 0, poll=3600.0).take(800))
    await in_line(redis, 1)
    later_unit = Unit(redis, 1, poll=3600.0)
    later = asyncio.create_task(later_unit.take(50))  # fits, but waits behind the riskier
    await in_line(redis, 2)

    riskier.cancel()  # the riskier unit stopped: the later one is next, and told so
    with pytest.raises(asyncio.CancelledError):
        await riskier

    async with asyncio.timeout(10):
        await later_unit.settle(await later, 50)
    await holder.settle(settle_holder, 100)
    assert await spent(redis) == 150
