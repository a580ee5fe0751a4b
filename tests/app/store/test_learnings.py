"""A repository's learnings on a real Redis: keyed by the repository's id, numbered for good,
capped, forgotten one by one; a pull request's own beside them; those an older Tiebreak kept
under a name, moved under an id whole."""

import asyncio
from datetime import UTC, datetime

from arq.connections import ArqRedis

from app.store import keys
from app.store.learnings import LearningStore, Repository
from app.store.redis_typing import reply
from policies.learnings import Learning, LearningSource

REPO = Repository(5_150, "octo/shop")


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
    listed = await store.all(REPO.id)
    assert [(item.number, item.rule, item.paths) for item in listed] == [
        (2, "Prefer pathlib.", ("tools/**",)),
        (1, "Amounts are cents.", ("billing/**",)),
    ]
    assert listed[1].thread_url == "https://github.com/octo/shop/pull/1#discussion_r10"


async def test_learnings_are_kept_without_expiry_and_per_repository(redis: ArqRedis) -> None:
    store = LearningStore(redis)
    await store.record(REPO, taught("Amounts are cents."))

    assert await redis.ttl(keys.learnings(REPO.id)) == -1
    assert await redis.ttl(keys.learnings_counter(REPO.id)) == -1
    assert await store.all(5_151) == []
    assert [item.number for item in await store.all(REPO.id)] == [1]


async def test_a_forgotten_number_is_never_given_again(redis: ArqRedis) -> None:
    store = LearningStore(redis)
    for rule in ("One.", "Two.", "Three."):
        await store.record(REPO, taught(rule))

    assert await store.forget(REPO.id, 3, 1)
    assert not await store.forget(REPO.id, 3, 1)
    assert not await store.forget(REPO.id, 99, 1)
    fourth = await store.record(REPO, taught("Four."))

    assert fourth.learning.number == 4
    assert [(item.number, item.rule) for item in await store.all(REPO.id)] == [
        (4, "Four."),
        (2, "Two."),
        (1, "One."),
    ]


async def test_past_the_cap_the_oldest_is_dropped_and_named(redis: ArqRedis) -> None:
    store = LearningStore(redis, cap=3)
    for rule in ("One.", "Two.", "Three."):
        await store.record(REPO, taught(rule))
    await store.forget(REPO.id, 1, 1)
    await store.record(REPO, taught("Four."))

    fifth = await store.record(REPO, taught("Five."))

    assert fifth.dropped == 2
    assert [item.number for item in await store.all(REPO.id)] == [5, 4, 3]


async def test_learnings_taught_at_once_get_distinct_numbers_within_the_cap(
    redis: ArqRedis,
) -> None:
    store = LearningStore(redis, cap=5)

    recorded = await asyncio.gather(*(store.record(REPO, taught(f"R{n}.")) for n in range(12)))

    assert sorted(r.learning.number or 0 for r in recorded) == list(range(1, 13))
    assert sorted(r.dropped or 0 for r in recorded if r.dropped) == list(range(1, 8))
    assert [item.number for item in await store.all(REPO.id)] == [12, 11, 10, 9, 8]


async def test_a_kept_learning_that_no_longer_validates_is_not_applied(redis: ArqRedis) -> None:
    store = LearningStore(redis)
    await store.record(REPO, taught("Good."))
    await reply(redis.hset(keys.learnings(REPO.id), "7", '{"rule": "", "paths": []}'))

    assert [item.number for item in await store.all(REPO.id)] == [1]


async def test_a_repository_of_the_same_name_and_another_id_shares_nothing(
    redis: ArqRedis,
) -> None:
    store = LearningStore(redis)
    await store.record(REPO, taught("Amounts are cents."))
    again = Repository(6_000, "Octo/Shop")

    assert await store.all(again.id) == []
    assert not await store.forget(again.id, 1, 1)
    assert await store.repository_named("octo/shop") == REPO.id
    recorded = await store.record(again, taught("Prefer pathlib."))

    assert recorded.learning.number == 1
    assert await store.repository_named("OCTO/shop") == again.id
    assert [item.rule for item in await store.all(REPO.id)] == ["Amounts are cents."]


async def test_a_pull_requests_own_learnings_are_numbered_among_the_repositorys_and_expire(
    redis: ArqRedis,
) -> None:
    store = LearningStore(redis)
    await store.record(REPO, taught("Amounts are cents."))

    own = await store.record(REPO, taught("Prefer pathlib.").model_copy(update={"pull": 7}))

    assert own.learning.number == 2
    assert [item.number for item in await store.all(REPO.id)] == [1]
    assert [(item.number, item.pull) for item in await store.of_pull(REPO.id, 7)] == [(2, 7)]
    assert await store.of_pull(REPO.id, 8) == []
    assert 0 < await redis.ttl(keys.pull_learnings(REPO.id, 7)) <= keys.PULL_LEARNINGS_TTL
    assert not await store.forget(REPO.id, 2, 8)
    assert await store.forget(REPO.id, 2, 7)
    assert await store.of_pull(REPO.id, 7) == []


async def test_learnings_kept_under_a_name_move_under_an_id_whole_once(redis: ArqRedis) -> None:
    store = LearningStore(redis)
    for number, rule in ((3, "Amounts are cents."), (5, "Prefer pathlib.")):
        body = taught(rule).model_dump_json(exclude={"number"})
        await reply(redis.hset(keys.named_learnings("Octo/Shop"), str(number), body))
    await redis.set(keys.named_learnings_counter("octo/shop"), "5")

    assert await store.unadopted_threads(REPO) == [10]
    assert await store.adopt(REPO)

    assert [item.number for item in await store.all(REPO.id)] == [5, 3]
    assert (await store.record(REPO, taught("Six."))).learning.number == 6
    assert await store.named(REPO.full_name) == []
    assert await store.repository_named(REPO.full_name) == REPO.id
    assert await store.unadopted_threads(REPO) == []
    assert not await store.adopt(REPO)


async def test_learnings_kept_under_a_name_are_not_adopted_by_an_id_with_its_own(
    redis: ArqRedis,
) -> None:
    store = LearningStore(redis)
    body = taught("Amounts are cents.").model_dump_json(exclude={"number"})
    await reply(redis.hset(keys.named_learnings(REPO.full_name), "1", body))
    await store.record(REPO, taught("Prefer pathlib."))

    assert await store.unadopted_threads(REPO) == []
    assert not await store.adopt(REPO)
    assert [item.rule for item in await store.all(REPO.id)] == ["Prefer pathlib."]
    assert [item.rule for item in await store.named(REPO.full_name)] == ["Amounts are cents."]


async def test_a_thread_an_older_tiebreak_learned_from_teaches_no_second_time(
    redis: ArqRedis,
) -> None:
    store = LearningStore(redis)
    await redis.set(keys.named_taught(REPO.full_name, 41), "1")

    assert not await store.first_teaching(REPO, 41)
    assert await store.first_teaching(REPO, 42)
    assert not await store.first_teaching(REPO, 42)
