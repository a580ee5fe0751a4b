"""The latest run of a pull request, changed by several jobs: a change is saved only over the
run it was made to, under a landing lock that costs a few round trips."""

from arq.connections import ArqRedis

from agents.review import Review
from app.publishing.publication import RunRecord
from app.store.pulls import Pulls
from tests.kits.store import ServerCounts
from tests.scenarios.reviews import REF

RUN = RunRecord(
    run_id="review:1",
    ref=REF,
    check_run_id=1,
    conclusion="neutral",
    review=Review(units=[]),
    diff="",
)


async def test_a_change_is_saved_only_over_the_run_it_was_made_to(redis: ArqRedis) -> None:
    pulls = Pulls(redis)
    await pulls.save(RUN)
    first, second = await pulls.read(REF), await pulls.read(REF)
    assert first is not None
    assert second is not None

    resolved = RUN.model_copy(update={"conclusion": "success"})
    failed = RUN.model_copy(update={"conclusion": "failure"})
    assert await pulls.replace(first, resolved)
    assert not await pulls.replace(second, failed)

    assert await pulls.latest(REF) == resolved


async def test_a_run_gone_meanwhile_is_not_brought_back(redis: ArqRedis) -> None:
    pulls = Pulls(redis)
    await pulls.save(RUN)
    read = await pulls.read(REF)
    assert read is not None
    await redis.flushall()

    assert not await pulls.replace(read, RUN.model_copy(update={"conclusion": "success"}))
    assert await pulls.latest(REF) is None


async def test_a_change_landed_costs_four_round_trips(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    pulls = Pulls(redis)
    await pulls.save(RUN)
    async with pulls.landing(REF) as latest:  # the scripts are loaded, a connection open
        assert latest is not None
        await pulls.replace(latest, RUN)
    before = await counts.received()

    async with pulls.landing(REF) as latest:
        assert latest is not None
        assert await pulls.replace(latest, RUN.model_copy(update={"conclusion": "success"}))

    after = await counts.received()
    # The lock taken, the run read, compared and set, the lock released (and the reading).
    assert after.reads - before.reads - 1 == 4
