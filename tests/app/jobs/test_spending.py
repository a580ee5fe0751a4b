"""The installation's daily token cap and what a review reports it spent, on a real worker.

The cap lives in Redis and is shared by every review of the installation; when it is
reached, no model is called and the check run says so, and the next UTC day works again.
"""

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from arq.connections import ArqRedis, RedisSettings, create_pool

from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM, by_role
from agents.protocol import ToolName
from app.settings import Settings
from app.store.allowance import DailyAllowance
from app.store.queue import ReviewQueue
from policies.budget import MIN_CEILING
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import agreed, run_review, run_worker
from tests.scenarios.debates import AGREED, PAYMENTS, PAYMENTS_AFTER, PAYMENTS_BEFORE, git_diff
from tests.scenarios.reviews import BASE, INSTALLATION, NUMBER, REF, REPO

TODAY = datetime(2026, 11, 21, 15, 0, tzinfo=UTC)
SPEND = re.compile(
    r"\*\*Spend\*\*: ([\d,]+) billed tokens of this review's ([\d,]+) ceiling · "
    r"([\d,]+) of the installation's ([\d,]+) daily tokens left"
)


def today() -> datetime:
    return TODAY


def tomorrow() -> datetime:
    return TODAY + timedelta(days=1)


def spend_line(summary: str) -> tuple[int, ...]:
    match = SPEND.search(summary)
    assert match, summary
    return tuple(int(n.replace(",", "")) for n in match.groups())


async def allowance(redis_url: str, cap: int, clock: Callable[[], datetime] = today) -> Any:
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    return redis, DailyAllowance(redis, INSTALLATION, cap, clock=clock)


async def test_the_summary_shows_what_the_review_spent_and_what_is_left_today(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    settings = Settings(tiebreak_daily_token_cap=1_000_000)

    await run_review(github, key, redis_url, agreed(), settings=settings, clock=today)

    (check,) = github.check_runs(REPO)
    spent, ceiling, left, cap = spend_line(check.output["summary"])
    redis, daily = await allowance(redis_url, 1_000_000)
    try:
        assert spent > 0
        assert await daily.spent() == spent  # every reservation was settled with its usage
    finally:
        await redis.aclose()
    assert (ceiling, cap) == (400_000, 1_000_000)
    assert left == cap - spent


async def test_when_the_daily_cap_is_reached_no_model_is_called_until_the_next_day(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    settings = Settings(tiebreak_daily_token_cap=100_000)
    redis, daily = await allowance(redis_url, 100_000)
    try:
        assert await daily.reserve(95_000) is not None  # spent by earlier reviews today
    finally:
        await redis.aclose()
    llm = ScriptedLLM(by_role())

    result, _ = await run_review(github, key, redis_url, llm, settings=settings, clock=today)

    assert result == "daily budget reached"
    assert llm.requests == []
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")
    assert check.output["title"] == "Daily budget reached"
    assert "95,000 of their 100,000 billed tokens" in check.output["summary"]
    assert "resets at 2026-11-22 00:00 UTC" in check.output["summary"]
    assert github.reviews(REPO, NUMBER) == []

    # The next day, the same installation's reviews run again.
    result, _ = await run_review(
        github, key, redis_url, agreed(), rerun="tomorrow", settings=settings, clock=tomorrow
    )

    assert result == "neutral"
    assert len(github.reviews(REPO, NUMBER)) == 1


def agreeing(request: LLMRequest) -> dict[str, Any]:
    """The agreed conversation, answered by tool: any number of reviews can share it."""
    return AGREED[ToolName(request.tool.name).value][0]


async def test_two_concurrent_reviews_share_the_cap_and_never_pass_it_together(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    # Two pull requests of one installation, each with a large file to read.
    big = git_diff(
        {PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER), "app/table.py": ("", "x = 1\n" * 5_000)}
    )
    first, second = REF, REF.model_copy(update={"number": NUMBER + 1, "head_sha": "c" * 40})
    for ref in (first, second):
        github.add_pull(REPO, ref.number, head_sha=ref.head_sha, base_sha=BASE, diff=big)
    # What one review costs, measured alone.
    await run_review(github, key, redis_url, ScriptedLLM(agreeing), settings=Settings())
    (measured,) = github.check_runs(REPO)
    one_review = spend_line(measured.output["summary"])[0]
    # Enough for both to start, not for both to finish.
    cap = 2 * one_review - 1
    assert cap >= MIN_CEILING
    redis, daily = await allowance(redis_url, cap, today)
    try:
        await redis.flushall()

        async def both(queue: ReviewQueue) -> None:
            await queue.enqueue_review(first, rerun="again")
            await queue.enqueue_review(second)

        settings = Settings(tiebreak_daily_token_cap=cap)
        await run_worker(
            github, key, redis_url, ScriptedLLM(agreeing), both, settings=settings, clock=today
        )
        total = await daily.spent()
    finally:
        await redis.aclose()

    runs = [c for c in github.check_runs(REPO) if c.id != measured.id]
    assert [c.output["title"] for c in runs if "Daily budget" in c.output["title"]] == []
    spent = [spend_line(c.output["summary"])[0] for c in runs]
    assert len(spent) == 2  # both ran
    assert sum(spent) == total <= cap
    # At least one of them ran out of the day's tokens and says its review is not finished.
    assert "action_required" in [c.states[-1][1] for c in runs]
