"""A repository's learnings on a real Redis: numbered for good, capped, forgotten one by one."""

import asyncio
from datetime import UTC, datetime

from arq.connections import ArqRedis

from app.store import keys
from app.store.learnings import LearningStore
from app.store.redis_typing import reply
from policies.learnings import Learning, LearningSource

REPO = "octo/shop"


def taught(rule: str, paths: tuple[str, ...] = ("billing/**",)) -> Learning:
    return Learning(
        rule=rule,
        paths=paths,
        source=LearningSource.WITHDRAWN,
        taught_by="octocat",
        taught_at=datetime(2025, 3, 1, tzinfo=UTC),
        thread_url="https://github.com/octo/shop/pull/1#discussion_r10",
    )


async def test_learnings_are_numbered_in_order_and_listed_most_recent_first(
    redis: ArqRedis,
) -> None:
    store = LearningStore(redis)

    first = await store.record(REPO, taught("Amounts are cents."))
    second = await store.record(REPO, taught("Prefer pathlib.", ("tools/**",)))

    assert (first.learning.number, second.learning.number) == (1, 2)
    assert (first.dropped, second.dropped) == (None, None)
    listed = await store.all(REPO)
    assert [(item.number, item.rule, item.paths) for item in listed] == [
        (2, "Prefer pathlib.", ("tools/**",)),
        (1, "Amounts are cents.", ("billing/**",)),
    ]
    assert listed[1].thread_url == "https://github.com/octo/shop/pull/1#discussion_r10"


async def test_learnings_are_kept_without_expiry_and_per_repository(redis: ArqRedis) -> None:
    store = LearningStore(redis)
    await store.record(REPO, taught("Amounts are cents."))

    assert await redis.ttl(keys.learnings(REPO)) == -1
    assert await redis.ttl(keys.learnings_counter(REPO)) == -1
    assert await store.all("octo/other") == []
    assert [item.number for item in await store.all("Octo/Shop")] == [1]


async def test_a_forgotten_number_is_never_given_again(redis: ArqRedis) -> None:
    store = LearningStore(redis)
    for rule in ("One.", "Two.", "Three."):
        await store.record(REPO, taught(rule))

    assert await store.forget(REPO, 3)
    assert not await store.forget(REPO, 3)
    assert not await store.forget(REPO, 99)
    fourth = await store.record(REPO, taught("Four."))

    assert fourth.learning.number == 4
    assert [(item.number, item.rule) for item in await store.all(REPO)] == [
        (4, "Four."),
        (2, "Two."),
        (1, "One."),
    ]


async def test_past_the_cap_the_oldest_is_dropped_and_named(redis: ArqRedis) -> None:
    store = LearningStore(redis, cap=3)
    for rule in ("One.", "Two.", "Three."):
        await store.record(REPO, taught(rule))
    await store.forget(REPO, 1)
    await store.record(REPO, taught("Four."))

    fifth = await store.record(REPO, taught("Five."))

    assert fifth.dropped == 2
    assert [item.number for item in await store.all(REPO)] == [5, 4, 3]


async def test_learnings_taught_at_once_get_distinct_numbers_within_the_cap(
    redis: ArqRedis,
) -> None:
    store = LearningStore(redis, cap=5)

    recorded = await asyncio.gather(*(store.record(REPO, taught(f"R{n}.")) for n in range(12)))

    assert sorted(r.learning.number or 0 for r in recorded) == list(range(1, 13))
    assert sorted(r.dropped or 0 for r in recorded if r.dropped) == list(range(1, 8))
    assert [item.number for item in await store.all(REPO)] == [12, 11, 10, 9, 8]


async def test_a_kept_learning_that_no_longer_validates_is_not_applied(redis: ArqRedis) -> None:
    store = LearningStore(redis)
    await store.record(REPO, taught("Good."))
    await reply(redis.hset(keys.learnings(REPO), "7", '{"rule": "", "paths": []}'))

    assert [item.number for item in await store.all(REPO)] == [1]
