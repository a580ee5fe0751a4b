"""The latest run of a pull request, changed by several jobs: a change is saved only over the
run it was made to, under a landing lock that costs a few round trips."""

from arq.connections import ArqRedis

from agents.review import Review
from app.publishing.models import RunRecord
from app.store.pulls import RunStore
from tests.app.store_kit import ServerCounts
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
    runs = RunStore(redis)
    await runs.save(RUN)
    first, second = await runs.read(REF), await runs.read(REF)
    assert first is not None
    assert second is not None

    resolved = RUN.model_copy(update={"conclusion": "success"})
    failed = RUN.model_copy(update={"conclusion": "failure"})
    assert await runs.replace(first, resolved)
    assert not await runs.replace(second, failed)

    assert await runs.latest(REF) == resolved


async def test_a_run_gone_meanwhile_is_not_brought_back(redis: ArqRedis) -> None:
    runs = RunStore(redis)
    await runs.save(RUN)
    read = await runs.read(REF)
    assert read is not None
    await redis.flushall()

    assert not await runs.replace(read, RUN.model_copy(update={"conclusion": "success"}))
    assert await runs.latest(REF) is None


async def test_a_change_landed_costs_four_round_trips(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    runs = RunStore(redis)
    await runs.save(RUN)
    async with runs.landing(REF) as latest:  # the scripts are loaded, a connection open
        assert latest is not None
        await runs.replace(latest, RUN)
    before = await counts.received()

    async with runs.landing(REF) as latest:
        assert latest is not None
        assert await runs.replace(latest, RUN.model_copy(update={"conclusion": "success"}))

    after = await counts.received()
    # The lock taken, the run read, compared and set, the lock released (and the reading).
    assert after.reads - before.reads - 1 == 4
