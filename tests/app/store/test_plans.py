"""A run's plan on a real Redis: written in one round trip, the run active and its units
waiting, and the run ended in one round trip, its keys left to expire soon; what its units
read beside their diffs is the same whether the run that planned them says it or a run
picked up from their plans reads it back."""

from dataclasses import replace

from arq.connections import ArqRedis

from agents.diff import Diff
from app.publishing.publication import UnitReading
from app.store import keys
from app.store.live import LiveRuns
from app.store.packed import pack
from app.store.plans import readings_of
from app.store.records import State, UnitStatus
from tests.kits.store import ServerCounts
from tests.scenarios.reviews import planned

RUN = "run-readings"
DIFF = "".join(
    f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    for path in ("read.py", "taught.py", "bare.py")
)


async def test_the_planning_run_and_a_run_picked_up_read_the_same(redis: ArqRedis) -> None:
    diff = Diff.parse(DIFF)
    read, taught, bare = diff.units(max_tokens=1)
    units = [
        replace(read, context="def a(): ...", intent="Raise a."),
        replace(taught, guidance="Name tests after behaviour.", learned=("Name tests",)),
        bare,
    ]
    plan = await planned(redis, RUN, diff, units)
    live = LiveRuns(redis, 60.0)

    readings = readings_of(units)

    assert readings == {
        read.id: UnitReading(context="def a(): ...", intent="Raise a."),
        taught.id: UnitReading(guidance="Name tests after behaviour.", learned=("Name tests",)),
    }
    assert await live.readings(RUN, plan.units) == readings


async def test_a_plan_is_written_in_one_round_trip_its_run_active_and_its_units_waiting(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    diff = Diff.parse(DIFF)
    units = diff.units(max_tokens=1)
    await redis.ping()  # the pool's connection made before anything is counted
    before = await counts.received()

    plan = await planned(redis, "run-begun", diff, units)

    after = await counts.received()
    assert after.reads - before.reads - 1 == 1  # one of them is the count's own reading
    live = LiveRuns(redis, 60.0)
    status = await live.run_status("run-begun")
    assert status is not None
    assert (status.state, status.units) == (State.ACTIVE, 3)
    assert [u.state for u in await live.units("run-begun", range(plan.units))] == [
        State.WAITING
    ] * 3
    assert await live.plan("run-begun") is not None


async def test_each_unit_reads_back_its_slice_of_the_diff_as_the_run_cut_it(
    redis: ArqRedis,
) -> None:
    diff = Diff.parse(DIFF)
    units = diff.units(max_tokens=1)
    await planned(redis, "run-cut", diff, units)
    live = LiveRuns(redis, 60.0)

    for n, unit in enumerate(units):
        plan = await live.unit_plan("run-cut", n)
        assert plan is not None
        assert plan.review_unit().diff == unit.diff


async def test_a_unit_plan_written_with_its_diff_as_text_reads_the_same(redis: ArqRedis) -> None:
    diff = Diff.parse(DIFF)
    units = diff.units(max_tokens=1)
    await planned(redis, "run-text", diff, units)
    live = LiveRuns(redis, 60.0)
    plan = await live.unit_plan("run-text", 0)
    assert plan is not None
    # As a worker of an earlier release wrote it: the slice as text, no files.
    earlier = plan.model_copy(update={"files": (), "diff": units[0].diff.text})
    await redis.set(keys.unit_plan("run-text", 0), pack(earlier))

    read = await live.unit_plan("run-text", 0)

    assert read is not None
    assert read.review_unit().diff == units[0].diff


async def test_a_finished_run_leaves_the_live_runs_and_its_keys_expire_soon_in_one_round_trip(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    diff = Diff.parse(DIFF)
    plan = await planned(redis, "run-ended", diff, diff.units(max_tokens=1))
    live = LiveRuns(redis, 60.0)
    await live.set_unit("run-ended", UnitStatus(number=1, state=State.COMPLETE))
    kept = [key for key in keys.run_keys("run-ended", plan.units) if await redis.exists(key)]
    assert "run-ended" in await live.live_runs()
    before = await counts.received()

    await live.finish("run-ended", State.COMPLETE, plan.units)

    after = await counts.received()
    assert after.reads - before.reads - 1 == 1  # one of them is the count's own reading
    assert "run-ended" not in await live.live_runs()
    status = await live.run_status("run-ended")
    assert status is not None
    assert status.state is State.COMPLETE
    assert len(kept) > plan.units  # the run's own keys and each unit's
    for key in kept:
        assert 0 < await redis.ttl(key) <= keys.FINISHED_TTL, key
