"""Runs and units as their hashes keep them, on a real Redis: what is written reads back the
same, a write changes only what it sets, and a field an older worker wrote does not stop
`tiebreak status` or the janitor from reading the rest."""

import pytest
from arq.connections import ArqRedis

from agents.models.llm import Role
from app.store import keys
from app.store.live import LiveRuns
from app.store.records import RunStatus, State, UnitStatus
from app.store.redis_typing import reply
from tests.scenarios.reviews import REF

RUN = "run-records"


@pytest.mark.parametrize(
    "status",
    [
        UnitStatus(number=0),
        UnitStatus(
            number=3,
            state=State.FAILED,
            attempt=2,
            worker="host:12",
            round=4,
            calls=9,
            tokens=12_345,
            error="RuntimeError: \x1b[31mboom\x1b[0m\nsecond line",
            fatal=True,
            agents={Role.TESTER: State.FAILED, Role.CODER: State.FAILED},
        ),
        UnitStatus(number=1, state=State.ACTIVE, fatal=False, agents={Role.ARBITER: State.WAITING}),
    ],
)
async def test_a_unit_reads_back_as_it_was_written(redis: ArqRedis, status: UnitStatus) -> None:
    live = LiveRuns(redis, 60.0)

    await live.set_unit(RUN, status)

    (read,) = await live.units(RUN, [status.number])
    assert read.model_dump(exclude={"updated"}) == status.model_dump(exclude={"updated"})
    assert read.updated > 0


async def test_a_units_write_changes_only_what_it_sets(redis: ArqRedis) -> None:
    live = LiveRuns(redis, 60.0)
    await live.set_unit(
        RUN,
        UnitStatus(number=0, state=State.ACTIVE, worker="w:1", agents={Role.TESTER: State.ACTIVE}),
    )

    await live.set_unit(RUN, UnitStatus(number=0, calls=3, agents={Role.CODER: State.WAITING}))

    (read,) = await live.units(RUN, [0])
    assert (read.state, read.worker, read.calls) == (State.ACTIVE, "w:1", 3)
    assert read.agents == {Role.TESTER: State.ACTIVE, Role.CODER: State.WAITING}


async def test_a_unit_an_older_worker_wrote_still_reads(redis: ArqRedis) -> None:
    # `replayed`: the attempt's journal entries replayed, which no status ever showed.
    older = {"state": "active", "replayed": "4", "agent:tester": "active"}
    await reply(redis.hset(keys.unit(RUN, 0), mapping=older))

    (read,) = await LiveRuns(redis, 60.0).units(RUN, [0])

    assert (read.state, read.agents) == (State.ACTIVE, {Role.TESTER: State.ACTIVE})


@pytest.mark.parametrize("trigger", ["opened", None])
async def test_a_run_reads_back_as_it_was_opened(redis: ArqRedis, trigger: str | None) -> None:
    live = LiveRuns(redis, 60.0)

    await live.open(RUN, REF, trigger)
    await live.set_run(RUN, RunStatus(state=State.WAITING, units=3))

    status = await live.run_status(RUN)
    assert status is not None
    assert (status.state, status.units, status.ref, status.trigger) == (
        State.WAITING,
        3,
        REF,
        trigger,
    )
    assert status.worker
    assert status.started is not None
    assert await live.count_resume(RUN) == 1
    assert await live.run_state(RUN) is State.WAITING


async def test_a_run_whose_worker_died_is_found_with_what_restarts_it(redis: ArqRedis) -> None:
    live = LiveRuns(redis, 60.0)
    await live.open(RUN, REF, "synchronize")  # no heartbeat: its worker is gone
    await live.open("ended", REF, None)
    await live.set_run("ended", RunStatus(state=State.COMPLETE))
    await live.count_resume(RUN)

    (orphan,) = await live.orphans(started_before=float("inf"))

    assert (orphan.run_id, orphan.ref, orphan.trigger, orphan.resumes) == (
        RUN,
        REF,
        "synchronize",
        1,
    )


async def test_a_run_that_was_never_written_has_no_status(redis: ArqRedis) -> None:
    assert await LiveRuns(redis, 60.0).run_status("nowhere") is None
