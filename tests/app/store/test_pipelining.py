"""Deliveries handled at the same moment reach Redis together: sixteen reviews queued at once
are one round trip to the redis-server, not sixteen, and each delivery still gets its own
answer, its own error, and its job."""

import asyncio
import time

import pytest
from arq.connections import ArqRedis
from redis.exceptions import ConnectionError, ResponseError

from app.events import CommentRef, HearingRequest, PullRequestRef
from app.store import keys
from app.store.deliveries import Deliveries
from app.store.keys import hearing_job_id, review_job_id
from app.store.pipelining import AutoPipeline, Stage
from app.store.queue import ReviewQueue
from app.store.redis_typing import reply
from tests.fakes.loopback import free_port
from tests.kits.store import ServerCounts

AT_ONCE = 16
"""Calls made at once. A round trip is counted as the redis-server's reads of the client's
commands, which it reads at most 16 KB at a time: the calls are as many as stay well within
one read (about 13 KB of reviews queued), so that one round trip is one read."""


def pull(number: int) -> PullRequestRef:
    return PullRequestRef(
        installation_id=7, owner="octo", repo="hello", number=number, head_sha=f"{number:040x}"
    )


async def queue_at_once(queue: ReviewQueue, deliveries: list[tuple[int, str]]) -> list[bool]:
    return list(
        await asyncio.gather(
            *(
                queue.enqueue_review(pull(n), trigger="opened", delivery=delivery)
                for n, delivery in deliveries
            )
        )
    )


async def queued(redis: ArqRedis) -> set[str]:
    return {job.decode() for job in await redis.zrange(keys.REVIEW_QUEUE, 0, -1)}


async def test_reviews_queued_at_once_cost_one_round_trip_and_each_is_queued(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    queue = ReviewQueue(redis)
    await queue_at_once(queue, [(0, "warm-up")])  # the script is loaded, a connection open
    before = await counts.received()

    added = await queue_at_once(queue, [(n, f"delivery-{n}") for n in range(1, AT_ONCE + 1)])

    after = await counts.received()
    assert added == [True] * AT_ONCE
    # One read for all the scripts, and one more for the reading itself.
    assert after.reads - before.reads - 1 == 1
    expected = {review_job_id(pull(n)) for n in range(AT_ONCE + 1)}
    assert await queued(redis) == expected
    remembered = [keys.delivery(f"delivery-{n}") for n in range(1, AT_ONCE + 1)]
    assert await redis.exists(*remembered) == AT_ONCE


def answer(n: int) -> HearingRequest:
    """A person's reply `n` on one of Tiebreak's threads."""
    comment = CommentRef(id=100 + n, kind="review", thread_id=99)
    return HearingRequest(pull=pull(1), login="octocat", comment=comment, text=f"Reply {n}.")


async def test_replies_queued_at_once_cost_one_round_trip_as_reviews_do(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    queue = ReviewQueue(redis)
    await queue.enqueue_hearing(answer(0))
    before = await counts.received()

    added = await asyncio.gather(*(queue.enqueue_hearing(answer(n)) for n in range(1, AT_ONCE + 1)))

    after = await counts.received()
    assert added == [True] * AT_ONCE
    assert after.reads - before.reads - 1 == 1
    assert await queued(redis) == {hearing_job_id(answer(n)) for n in range(AT_ONCE + 1)}
    assert not await queue.enqueue_hearing(answer(3))  # a reply is heard once


async def test_each_delivery_gets_its_own_answer_in_a_shared_round_trip(redis: ArqRedis) -> None:
    queue = ReviewQueue(redis)
    assert await queue_at_once(queue, [(n, f"delivery-{n}") for n in range(0, AT_ONCE, 2)]) == [
        True
    ] * (AT_ONCE // 2)

    # Redeliveries of the even ones, first deliveries of the odd ones, interleaved.
    added = await queue_at_once(queue, [(n, f"delivery-{n}") for n in range(AT_ONCE)])

    assert added == [n % 2 == 1 for n in range(AT_ONCE)]
    assert await queued(redis) == {review_job_id(pull(n)) for n in range(AT_ONCE)}


async def test_reviews_are_queued_after_redis_lost_its_scripts(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    queue = ReviewQueue(redis)
    await queue_at_once(queue, [(0, "warm-up")])
    await redis.script_flush()  # as a restarted redis-server has none
    before = await counts.received()

    added = await queue_at_once(queue, [(n, f"delivery-{n}") for n in range(1, AT_ONCE + 1)])

    after = await counts.received()
    assert added == [True] * AT_ONCE
    assert await queued(redis) == {review_job_id(pull(n)) for n in range(AT_ONCE + 1)}
    # Refused, loaded, run: three round trips for all of them (and one for the reading).
    assert after.reads - before.reads - 1 == 3


async def test_deliveries_remembered_at_once_each_learn_whether_they_were_seen(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    deliveries = Deliveries(redis)
    await deliveries.first_sighting("warm-up")
    before = await counts.received()

    seen = await asyncio.gather(*(deliveries.first_sighting(f"d-{n % 5}") for n in range(10)))

    after = await counts.received()
    assert seen == [True] * 5 + [False] * 5
    assert after.reads - before.reads - 1 == 1


def setting(key: str) -> Stage:
    return lambda pipe: pipe.set(key, "1")


async def out(counts: ServerCounts, blocked: int) -> None:
    """Until `blocked` connections wait in a blocking command: a pipeline holding one is out."""
    deadline = time.monotonic() + 5
    while (await counts.redis.info("clients"))["blocked_clients"] < blocked:
        if time.monotonic() > deadline:
            raise AssertionError(f"{blocked} blocked connections did not appear within 5 s")
        await asyncio.sleep(0.005)


async def test_calls_made_while_a_pipeline_is_out_go_together_as_the_next(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    pipeline = AutoPipeline(redis, stalled=60.0)  # never passed by here
    first = asyncio.ensure_future(pipeline.call(lambda pipe: pipe.blpop(["release"], timeout=30)))
    await out(counts, blocked=1)
    before = await counts.received()

    later = []
    for n in range(10):  # one after another, each on a pass of its own
        later.append(asyncio.ensure_future(pipeline.call(setting(f"key-{n}"))))
        await asyncio.sleep(0)
    await reply(counts.redis.lpush("release", "go"))

    assert await first == (b"release", b"go")
    assert await asyncio.gather(*later) == [True] * 10
    after = await counts.received()
    # The push that let the first back, then all ten in one (and the reading).
    assert after.reads - before.reads - 1 == 2


async def test_a_stalled_pipeline_does_not_hold_up_the_calls_after_it(
    redis: ArqRedis, counts: ServerCounts
) -> None:
    pipeline = AutoPipeline(redis, stalled=0.05)
    stalled = asyncio.ensure_future(pipeline.call(lambda pipe: pipe.blpop(["release"], timeout=30)))
    await out(counts, blocked=1)

    async with asyncio.timeout(5):  # not the 30 s the stalled one may take
        assert await pipeline.call(lambda pipe: pipe.set("after", "1")) is True
    assert not stalled.done()
    await reply(counts.redis.lpush("release", "go"))
    assert await stalled == (b"release", b"go")


async def test_a_command_that_fails_fails_only_its_caller(redis: ArqRedis) -> None:
    pipeline = AutoPipeline(redis)
    await redis.set("a-string", "text")

    results = await asyncio.gather(
        pipeline.call(lambda pipe: pipe.set("before", "1")),
        pipeline.call(lambda pipe: pipe.lpush("a-string", "x")),  # not a list
        pipeline.call(lambda pipe: pipe.get("a-string")),
        return_exceptions=True,
    )

    assert results[0] is True
    assert isinstance(results[1], ResponseError)
    assert "WRONGTYPE" in str(results[1])
    assert results[2] == b"text"


async def test_a_caller_that_stops_waiting_before_the_send_sends_nothing(
    redis: ArqRedis,
) -> None:
    pipeline = AutoPipeline(redis)
    kept = asyncio.ensure_future(pipeline.call(lambda pipe: pipe.set("kept", "1")))
    dropped = asyncio.ensure_future(pipeline.call(lambda pipe: pipe.set("dropped", "1")))
    await asyncio.sleep(0)  # both have joined the send, which has not run yet
    dropped.cancel()

    assert await kept is True
    with pytest.raises(asyncio.CancelledError):
        await dropped
    assert await reply(redis.exists("kept", "dropped")) == 1


async def test_every_caller_hears_that_redis_cannot_be_reached() -> None:
    # A port nothing listens on: the pool connects when the send needs a connection.
    unreachable = ArqRedis.from_url(f"redis://127.0.0.1:{free_port()}/0")
    pipeline = AutoPipeline(unreachable)
    try:
        async with asyncio.timeout(10):  # refused at once, never left waiting
            results = await asyncio.gather(
                *(pipeline.call(lambda pipe: pipe.get("key")) for _ in range(3)),
                return_exceptions=True,
            )
    finally:
        await unreachable.aclose()

    assert [type(result) for result in results] == [ConnectionError] * 3
