"""A worker starts a job as soon as it is queued, and the next one as soon as one of its own
ends, however rarely it polls its queue."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from arq import func
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.typing import WorkerCoroutine
from arq.utils import timestamp_ms
from arq.worker import Function

from app.events import CommandCall, CommandRequest, CommentRef, HearingRequest
from app.store.keys import REVIEW_QUEUE, UNIT_QUEUE, in_progress, unit_job_id
from app.store.queue import JobName, ReviewQueue
from tests.kits.store import PROMPT, prompt_worker
from tests.scenarios.reviews import REF


class Units:
    """Unit jobs that note when each starts and end when the test lets them."""

    def __init__(self) -> None:
        self.started: asyncio.Queue[int] = asyncio.Queue()
        self.finish = asyncio.Event()

    async def debate_unit(self, ctx: dict[str, Any], run_id: str, number: int, attempt: int) -> str:
        self.started.put_nowait(number)
        await self.finish.wait()
        return "done"


@pytest.fixture
async def pool(redis_url: str) -> AsyncIterator[ArqRedis]:
    redis = await create_pool(RedisSettings.from_dsn(redis_url))
    yield redis
    await redis.aclose()


@pytest.fixture
def slots() -> int:
    """Jobs the worker runs at once."""
    return 1


@pytest.fixture
async def units(redis_url: str, pool: ArqRedis, slots: int) -> AsyncIterator[Units]:
    units = Units()
    function = func(units.debate_unit, name=JobName.UNIT)
    async with prompt_worker(redis_url, pool, [function], UNIT_QUEUE, slots):
        try:
            yield units
        finally:
            units.finish.set()


class Reviews:
    """The jobs of the review queue, each noting its name as it starts."""

    def __init__(self) -> None:
        self.started: asyncio.Queue[str] = asyncio.Queue()

    def functions(self) -> list[Function]:
        return [func(self._job(name), name=name) for name in REVIEW_JOBS]

    def _job(self, name: JobName) -> WorkerCoroutine:
        async def job(ctx: dict[Any, Any], *args: Any, **kwargs: Any) -> str:
            self.started.put_nowait(name)
            return "done"

        return job


REVIEW_JOBS: dict[JobName, Callable[[ReviewQueue], Awaitable[bool]]] = {
    JobName.REVIEW: lambda queue: queue.enqueue_review(REF),
    JobName.COMMANDS: lambda queue: queue.enqueue_commands(
        CommandRequest(pull=REF, login="octocat", calls=[CommandCall(name="help")]), "button"
    ),
    JobName.HEARING: lambda queue: queue.enqueue_hearing(
        HearingRequest(
            pull=REF,
            login="octocat",
            comment=CommentRef(id=12, kind="review", thread_id=11),
            text="It is checked upstream.",
        )
    ),
}
"""How each job of the review queue is queued."""


@pytest.fixture
async def reviews(redis_url: str, pool: ArqRedis) -> AsyncIterator[Reviews]:
    reviews = Reviews()
    async with prompt_worker(redis_url, pool, reviews.functions(), REVIEW_QUEUE, 1):
        yield reviews


async def test_a_queued_job_starts_at_once_on_a_worker_that_polls_rarely(
    units: Units, pool: ArqRedis
) -> None:
    assert await ReviewQueue(pool).enqueue_unit("run", 4, 1)

    assert await asyncio.wait_for(units.started.get(), PROMPT) == 4


@pytest.mark.parametrize("job", list(REVIEW_JOBS))
async def test_every_job_of_the_review_queue_starts_at_once_on_a_worker_that_polls_rarely(
    reviews: Reviews, pool: ArqRedis, job: JobName
) -> None:
    assert await REVIEW_JOBS[job](ReviewQueue(pool))

    assert await asyncio.wait_for(reviews.started.get(), PROMPT) == job


async def test_a_job_waiting_for_a_slot_starts_as_soon_as_one_ends(
    units: Units, pool: ArqRedis
) -> None:
    # One slot: the second unit is announced while the first holds it, and waits.
    await ReviewQueue(pool).enqueue_units("run", [(0, 1), (1, 1)])
    assert await asyncio.wait_for(units.started.get(), PROMPT) == 0

    units.finish.set()

    assert await asyncio.wait_for(units.started.get(), PROMPT) == 1


async def test_units_queued_together_start_each_once_and_an_attempt_is_queued_once(
    units: Units, pool: ArqRedis
) -> None:
    queue = ReviewQueue(pool)
    units.finish.set()

    assert await queue.enqueue_units("run", [(0, 1), (1, 1), (2, 1)]) == [True, True, True]
    assert await queue.enqueue_units("run", [(1, 1), (1, 2)]) == [False, True]
    assert await queue.enqueue_units("run", []) == []

    started = [await asyncio.wait_for(units.started.get(), PROMPT) for _ in range(4)]
    assert sorted(started) == [0, 1, 1, 2]


@pytest.mark.parametrize("slots", [1, 4])
async def test_a_job_running_elsewhere_or_not_due_is_not_started(
    units: Units, pool: ArqRedis
) -> None:
    queue = ReviewQueue(pool)
    # Unit 1 runs on another worker; unit 3 is due in an hour.
    await pool.psetex(in_progress(unit_job_id("run", 1, 1)), 60_000, b"1")
    assert await queue.enqueue_units("run", [(0, 1), (1, 1), (2, 1)]) == [True, True, True]
    await pool.zadd(UNIT_QUEUE, {unit_job_id("run", 3, 1): timestamp_ms() + 3_600_000})
    units.finish.set()
    await queue.enqueue_units("run", [(4, 1)])

    started = [await asyncio.wait_for(units.started.get(), PROMPT) for _ in range(3)]
    await asyncio.sleep(0.2)  # a wrongly claimed job would have started by now
    assert sorted(started) == [0, 2, 4]
    assert units.started.empty()
