"""Live runs on a real Redis: a heartbeat outlives renewals Redis refuses, and a run whose keys
expired without anyone finishing it is taken off the live runs."""

import asyncio
import time

import pytest
from arq.connections import ArqRedis

from app.store import keys
from app.store.live import LiveRuns
from tests.kits.store import RefusedWrites
from tests.scenarios.reviews import REF

RUN = "run-live"
HEARTBEAT = 1.0
"""Seconds the heartbeats here live without renewal: the shortest a worker may be given."""


async def lapses(live: LiveRuns, seconds: float) -> int:
    """How many of the looks at unit 0's heartbeat, every 20 ms for `seconds`, found attempt 1
    dead."""
    dead = 0
    for _ in range(round(seconds / 0.02)):
        dead += not await live.unit_alive(RUN, 0, 1)
        await asyncio.sleep(0.02)
    return dead


async def test_a_heartbeat_outlives_a_renewal_redis_refused(
    redis: ArqRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = LiveRuns(redis, HEARTBEAT)
    beat = keys.unit_heartbeat(RUN, 0)

    async with live.beating_unit(RUN, 0, 1):
        refusing = RefusedWrites(redis, {beat: {1}})
        monkeypatch.setattr(redis, "set", refusing)
        dead = await lapses(live, 2 * HEARTBEAT)

    assert refusing.all_refused.is_set()
    assert dead == 0
    assert len(refusing.life_left[beat]) >= 2  # renewed since, on time


async def test_a_heartbeat_two_renewals_in_a_row_were_refused_for_is_renewed_before_it_lapses(
    redis: ArqRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = LiveRuns(redis, HEARTBEAT)
    beat = keys.unit_heartbeat(RUN, 0)

    async with live.beating_unit(RUN, 0, 1):
        refusing = RefusedWrites(redis, {beat: {1, 2}})
        monkeypatch.setattr(redis, "set", refusing)
        dead = await lapses(live, 2 * HEARTBEAT)

    assert dead == 0
    # The renewal after the two refused found the heartbeat with time to spare.
    assert refusing.life_left[beat][0] > live.heartbeat_ms / 8, refusing.life_left


async def test_a_listed_run_whose_keys_expired_unfinished_is_taken_off_the_live_runs(
    redis: ArqRedis,
) -> None:
    live = LiveRuns(redis, HEARTBEAT)
    expired = "run-expired"
    await live.open(RUN, REF, None)
    await live.open(expired, REF, None)
    await redis.delete(keys.run(expired))  # its hash expired: nobody finished the run

    orphans = await live.orphans(started_before=time.time() + 1)

    assert [orphan.run_id for orphan in orphans] == [RUN]  # no heartbeat: its worker died
    assert await live.live_runs() == [RUN]
