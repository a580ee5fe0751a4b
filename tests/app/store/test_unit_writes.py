"""A unit attempt's batched writes on a real Redis: what waits for the attempt's next write
lands with it, and a reservation given back counts before the next one is checked."""

from arq.connections import ArqRedis

from agents.models.llm import Role
from app.store import keys
from app.store.allowance import RunCeiling, TokenCounter
from app.store.ceiling_line import RunPools
from app.store.live import LiveRuns
from app.store.records import State, UnitStatus
from app.store.unit_writes import UnitWrites

RUN = "run-writes"


def ceiling(redis: ArqRedis, cap: int) -> RunCeiling:
    return RunCeiling(redis, keys.spent(RUN), cap, ttl=keys.LIVE_TTL)


async def test_a_reservation_given_back_counts_before_the_next_is_checked(
    redis: ArqRedis,
) -> None:
    live = LiveRuns(redis, 60.0)
    writes = UnitWrites(live, RUN, 0, 1)
    run = ceiling(redis, 1000)
    # The attempt's heartbeat is not kept: the 800 would not be waited for, only counted.
    pool = RunPools(writes, run, place=writes.place())
    settle = await pool.reserve(800)
    assert settle is not None

    await settle(0)  # refused by the API: nothing used
    writes.stage(UnitStatus(number=0, agents={Role.TESTER: State.WAITING}))
    assert await run.spent() == 800  # waiting for the attempt's next write

    again = await pool.reserve(900)  # fits only once the 800 are given back

    assert again is not None
    assert await run.spent() == 900
    (status,) = await live.units(RUN, [0])
    assert status.agents == {"tester": State.WAITING}


async def test_a_refused_reservation_still_writes_what_waited(redis: ArqRedis) -> None:
    live = LiveRuns(redis, 60.0)
    writes = UnitWrites(live, RUN, 0, 1)
    other = TokenCounter("tiebreak:test:other", 100, 60)
    writes.stage(UnitStatus(number=0, calls=2))
    await writes.adjust([other], 40)

    assert not await writes.reserve([TokenCounter(keys.spent(RUN), 100, 60)], 101)

    assert await redis.get("tiebreak:test:other") == b"40"
    assert await redis.get(keys.spent(RUN)) is None
    (status,) = await live.units(RUN, [0])
    assert status.calls == 2
