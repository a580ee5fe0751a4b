"""The daily allowance on a real Redis: what an installation's reviews may spend each day."""

import asyncio
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool

from app.store import keys
from app.store.allowance import DailyAllowance, RedisLedger, RunCeiling
from app.store.ceiling_line import PlaceInLine, RunPools
from app.store.keys import ALLOWANCE_TTL, LIVE_TTL
from policies.budget import Allowance, TokenCeiling
from policies.errors import AllowanceExhausted, CeilingReached, OutOfTokens

INSTALLATION = 42
MORNING = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
TODAY_KEY = f"tiebreak:allowance:{INSTALLATION}:2025-03-01"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(MORNING)


def allowance(redis: ArqRedis, clock: Clock, cap: int = 1000) -> DailyAllowance:
    return DailyAllowance(redis, INSTALLATION, cap, clock=clock)


async def test_a_reservation_within_the_cap_is_counted_at_once(
    redis: ArqRedis, clock: Clock
) -> None:
    daily = allowance(redis, clock)

    assert await daily.reserve(300) is not None

    assert await daily.spent() == 300
    assert await daily.remaining() == 700


async def test_a_reservation_that_would_pass_the_cap_is_refused_and_changes_nothing(
    redis: ArqRedis, clock: Clock
) -> None:
    daily = allowance(redis, clock)
    assert await daily.reserve(600) is not None

    assert await daily.reserve(401) is None

    assert await daily.spent() == 600
    assert await daily.remaining() == 400


async def test_an_exact_fit_is_allowed_and_leaves_nothing(redis: ArqRedis, clock: Clock) -> None:
    daily = allowance(redis, clock)
    assert await daily.reserve(600) is not None

    assert await daily.reserve(400) is not None

    assert await daily.remaining() == 0
    assert await daily.reserve(1) is None


async def test_a_fresh_installation_has_spent_nothing(redis: ArqRedis, clock: Clock) -> None:
    daily = allowance(redis, clock)

    assert await daily.spent() == 0
    assert await daily.remaining() == 1000


@pytest.mark.parametrize(
    ("reserved", "used", "spent"),
    [
        (500, 200, 200),  # unused tokens are refunded
        (500, 500, 500),
        (500, 0, 0),  # a call that failed before using anything
        (500, 650, 650),  # a call may use a little more than it reserved; that is charged
    ],
)
async def test_settling_charges_what_the_call_used(
    redis: ArqRedis, clock: Clock, reserved: int, used: int, spent: int
) -> None:
    daily = allowance(redis, clock)
    settle = await daily.reserve(reserved)
    assert settle is not None

    await settle(used)

    assert await daily.spent() == spent


async def test_usage_beyond_the_cap_is_charged_but_remaining_never_goes_negative(
    redis: ArqRedis, clock: Clock
) -> None:
    daily = allowance(redis, clock)
    settle = await daily.reserve(1000)
    assert settle is not None

    await settle(1100)

    assert await daily.spent() == 1100
    assert await daily.remaining() == 0
    assert await daily.reserve(1) is None


async def test_settling_twice_counts_once(redis: ArqRedis, clock: Clock) -> None:
    daily = allowance(redis, clock)
    settle = await daily.reserve(500)
    assert settle is not None

    await settle(300)
    await settle(300)
    await settle(50)

    assert await daily.spent() == 300


@pytest.mark.parametrize("tokens", [0, -1])
async def test_a_reservation_needs_positive_tokens(
    redis: ArqRedis, clock: Clock, tokens: int
) -> None:
    daily = allowance(redis, clock)

    with pytest.raises(ValueError, match="positive"):
        await daily.reserve(tokens)

    assert await daily.spent() == 0


async def test_a_negative_usage_is_refused_and_the_reservation_stays_open(
    redis: ArqRedis, clock: Clock
) -> None:
    daily = allowance(redis, clock)
    settle = await daily.reserve(500)
    assert settle is not None

    with pytest.raises(ValueError, match="negative"):
        await settle(-1)

    assert await daily.spent() == 500
    await settle(100)
    assert await daily.spent() == 100


async def test_concurrent_reviews_never_pass_the_cap_together(redis_url: str) -> None:
    """Two reviews of one installation, each with its own pool, race 100 calls: every
    reservation that succeeds leaves the day within the cap, and the day ends at exactly what
    the calls used."""
    cap, tasks = 10_000, 100
    clock = Clock(MORNING)
    pools = [await create_pool(RedisSettings.from_dsn(redis_url)) for _ in range(2)]
    try:
        reviews = [DailyAllowance(pool, INSTALLATION, cap, clock=clock) for pool in pools]
        rng = random.Random(7)
        # Everyone holds a first reservation until all have tried, so the cap is contested
        # for certain; the second round then interleaves reserves with settles.
        everyone_tried = asyncio.Barrier(tasks)
        seen: list[int] = []
        used_total = 0
        refused = 0

        async def call(daily: DailyAllowance, tokens: int, used: int, *, hold: bool) -> None:
            nonlocal used_total, refused
            settle = await daily.reserve(tokens)
            if settle is None:
                refused += 1
            else:
                seen.append(await daily.spent())
            if hold:
                await everyone_tried.wait()
            if settle is not None:
                await settle(used)
                used_total += used

        async def review_call(daily: DailyAllowance, plan: list[tuple[int, int]]) -> None:
            (first, first_used), (second, second_used) = plan
            await call(daily, first, first_used, hold=True)
            await call(daily, second, second_used, hold=False)

        plans = []
        for _ in range(tasks):
            plan = []
            for _ in range(2):
                tokens = rng.randint(100, 1000)
                plan.append((tokens, rng.randint(0, tokens)))
            plans.append((rng.choice(reviews), plan))

        await asyncio.gather(*(review_call(daily, plan) for daily, plan in plans))

        assert refused > 0
        assert seen
        assert max(seen) <= cap
        assert await reviews[0].spent() == await reviews[1].spent() == used_total
    finally:
        for pool in pools:
            await pool.aclose()


async def test_the_next_utc_day_starts_fresh(redis: ArqRedis, clock: Clock) -> None:
    daily = allowance(redis, clock)
    assert await daily.reserve(1000) is not None
    assert await daily.reserve(1) is None

    clock.now = datetime(2025, 3, 2, 0, 0, tzinfo=UTC)

    assert await daily.spent() == 0
    assert await daily.reserve(1000) is not None


async def test_a_call_settled_after_midnight_adjusts_the_day_it_reserved_on(
    redis: ArqRedis, clock: Clock
) -> None:
    clock.now = datetime(2025, 3, 1, 23, 59, 59, tzinfo=UTC)
    daily = allowance(redis, clock)
    settle = await daily.reserve(800)
    assert settle is not None

    clock.now = datetime(2025, 3, 2, 0, 0, 1, tzinfo=UTC)
    await settle(300)

    assert await daily.spent() == 0
    assert await redis.exists(f"tiebreak:allowance:{INSTALLATION}:2025-03-02") == 0
    assert await redis.get(TODAY_KEY) == b"300"


@pytest.mark.parametrize(
    ("now", "resets_at"),
    [
        (MORNING, datetime(2025, 3, 2, tzinfo=UTC)),
        (datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 3, 2, tzinfo=UTC)),
        (datetime(2025, 12, 31, 23, 59, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)),
        # 23:30 in New York is already 04:30 the next day in UTC.
        (
            datetime(2025, 3, 1, 23, 30, tzinfo=timezone(timedelta(hours=-5))),
            datetime(2025, 3, 3, tzinfo=UTC),
        ),
    ],
)
async def test_the_allowance_resets_at_the_next_utc_midnight(
    redis: ArqRedis, now: datetime, resets_at: datetime
) -> None:
    assert allowance(redis, Clock(now)).resets_at() == resets_at


async def test_a_naive_clock_is_refused(redis: ArqRedis) -> None:
    daily = allowance(redis, Clock(datetime(2025, 3, 1, 9, 30)))

    with pytest.raises(ValueError, match="aware"):
        await daily.reserve(100)


async def test_installations_are_independent(redis: ArqRedis, clock: Clock) -> None:
    ours = allowance(redis, clock)
    theirs = DailyAllowance(redis, INSTALLATION + 1, 1000, clock=clock)
    assert await ours.reserve(1000) is not None

    assert await theirs.reserve(1000) is not None
    assert await ours.reserve(1) is None
    assert await theirs.spent() == 1000


async def test_a_days_counter_expires_within_two_days(redis: ArqRedis, clock: Clock) -> None:
    daily = allowance(redis, clock)
    settle = await daily.reserve(500)
    assert settle is not None
    assert 0 < await redis.ttl(TODAY_KEY) <= ALLOWANCE_TTL <= 2 * 24 * 3600

    await settle(100)

    assert 0 < await redis.ttl(TODAY_KEY) <= ALLOWANCE_TTL


async def test_reviews_sharing_an_installation_stop_at_its_allowance(
    redis: ArqRedis, clock: Clock
) -> None:
    shared: Allowance = allowance(redis, clock)
    first, second = TokenCeiling(5000, shared), TokenCeiling(5000, shared)
    settle = await first.take(800)

    with pytest.raises(AllowanceExhausted):
        await second.take(300)

    await settle(500)
    await (await second.take(300))(300)
    assert await allowance(redis, clock).spent() == 800


def run_ceiling(redis: ArqRedis, run: str, cap: int) -> RunCeiling:
    return RunCeiling(redis, f"tiebreak:test:spent:{run}", cap, ttl=LIVE_TTL)


def unit_pools(redis: ArqRedis, run: RunCeiling, *others: DailyAllowance) -> RunPools:
    """A unit's pools on `run` and `others` (its day), as a unit's job reserves on them; its
    heartbeat is not kept, so none of its calls is waited for and a call that does not fit is
    refused at once (waiting is `tests.app.store.test_ceiling_line`'s)."""
    name = run.key.rsplit(":", 1)[-1]
    beat = keys.unit_heartbeat(name, 0)
    place = PlaceInLine(keys.held(name), keys.line(name), 0, beat, "1", keys.line_wake(name))
    return RunPools(RedisLedger(redis), run, *others, place=place)


async def test_a_run_and_its_day_are_reserved_on_together_or_not_at_all(
    redis: ArqRedis, clock: Clock
) -> None:
    run, day = run_ceiling(redis, "r1", 1000), allowance(redis, clock, cap=5000)
    both = unit_pools(redis, run, day)
    assert await day.reserve(4800) is not None  # another review's, today

    with pytest.raises(AllowanceExhausted):
        await both.reserve(300)  # the day cannot cover it: the run keeps nothing
    assert (await run.spent(), await day.spent()) == (0, 4800)
    with pytest.raises(CeilingReached):  # named as what refused it, not as the day
        await unit_pools(redis, run_ceiling(redis, "r2", 100), day).reserve(150)
    assert await day.spent() == 4800  # the run could not cover it: the day keeps nothing

    settle = await both.reserve(150)
    assert settle is not None
    assert (await run.spent(), await day.spent()) == (150, 4950)
    with pytest.raises(ValueError, match="negative"):
        await settle(-1)
    await settle(180)  # more than reserved: charged on both
    await settle(0)  # only the first settlement counts
    assert (await run.spent(), await day.spent()) == (180, 4980)
    assert 0 < await redis.ttl(run.key) <= LIVE_TTL
    assert LIVE_TTL < await redis.ttl(TODAY_KEY) <= ALLOWANCE_TTL


async def test_concurrent_runs_never_pass_their_ceilings_or_the_day_together(
    redis_url: str,
) -> None:
    """Two runs of one installation, on two connections, race 100 calls each reserving on its
    run and the day at once: no counter ever passes its cap, and each ends at what its calls
    used."""
    clock = Clock(MORNING)
    pools = [await create_pool(RedisSettings.from_dsn(redis_url)) for _ in range(2)]
    try:
        runs = [run_ceiling(pool, f"r{i}", 4_000) for i, pool in enumerate(pools)]
        days = [allowance(pool, clock, cap=6_000) for pool in pools]
        rng = random.Random(11)
        everyone_tried = asyncio.Barrier(100)
        used = [0, 0]
        refused = 0
        seen: list[tuple[int, int, int]] = []

        async def call(i: int, tokens: int, usage: int) -> None:
            nonlocal refused
            try:
                settle = await unit_pools(pools[i], runs[i], days[i]).reserve(tokens)
            except OutOfTokens:
                settle = None
            if settle is None:
                refused += 1
            else:
                seen.append((await runs[0].spent(), await runs[1].spent(), await days[i].spent()))
            await everyone_tried.wait()  # the caps are contested for certain
            if settle is not None:
                await settle(usage)
                used[i] += usage

        calls = []
        for _ in range(100):
            tokens = rng.randint(100, 400)
            calls.append(call(rng.randrange(2), tokens, rng.randint(0, tokens)))
        await asyncio.gather(*calls)

        assert refused > 0
        assert max(max(r0, r1) for r0, r1, _ in seen) <= 4_000
        assert max(d for _, _, d in seen) <= 6_000
        assert [await r.spent() for r in runs] == used
        assert await days[0].spent() == sum(used)
    finally:
        for pool in pools:
            await pool.aclose()
