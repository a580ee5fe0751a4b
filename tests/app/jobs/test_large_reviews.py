"""A review of a large pull request costs each of its units what a small one's do: a unit reads
from Redis its own part of the pull request, never the whole. What a review leaves in Redis is
smaller than the diff, and what is kept for days holds none of it as plain text."""

from typing import Any

import pytest
from redis.asyncio import Redis

from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM
from agents.models.tokens import typical_tokens
from app.events import PullRequestRef
from app.store.redis_typing import reply
from policies.config import CONFIG_PATH
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import run_review
from tests.scenarios.debates import git_diff, report
from tests.scenarios.reviews import BASE, REF, REPO

LINES = 150
CONFIG = "debate:\n  token_ceiling: 100000000\n"
"""A ceiling out of the way of a hundred units' debates."""
DAY = 24 * 3600


def changed_files(count: int) -> dict[str, tuple[str, str]]:
    """`count` files of `LINES` changed lines each: {path: (before, after)}."""
    return {
        f"src/module_{n:03}.py": (
            "".join(f"value_{i} = compute({i})\n" for i in range(LINES)),
            "".join(f"value_{i} = compute({i}, scale={n})\n" for i in range(LINES)),
        )
        for n in range(count)
    }


def unit_tokens(files: dict[str, tuple[str, str]]) -> int:
    """A unit size that makes each file a unit of its own."""
    return int(typical_tokens(git_diff(dict(list(files.items())[:1]))) * 1.5)


def nothing_found(request: LLMRequest) -> dict[str, Any]:
    """Every unit's tester reports nothing: one model call a unit."""
    return report()


async def sent(redis: Redis) -> int:
    """Bytes Redis has sent its clients, as `INFO stats` counts them."""
    return int((await redis.info("stats"))["total_net_output_bytes"])


async def review(
    github: FakeGitHub, key: AppKey, redis_url: str, number: int, count: int
) -> tuple[str, int]:
    """Open a pull request of `count` files and review it; its diff, and the bytes Redis
    sent during the review."""
    files = changed_files(count)
    diff = git_diff(files)
    head = f"{number:040x}"
    github.add_pull(
        REPO,
        number,
        head_sha=head,
        base_sha=BASE,
        diff=diff,
        base_files={CONFIG_PATH: CONFIG} | {path: old for path, (old, _) in files.items()},
        head_files={path: new for path, (_, new) in files.items()},
    )
    ref = PullRequestRef.model_validate({**REF.model_dump(), "number": number, "head_sha": head})
    async with Redis.from_url(redis_url) as redis:
        before = await sent(redis)
        result, _ = await run_review(
            github,
            key,
            redis_url,
            ScriptedLLM(nothing_found),
            ref,
            unit_tokens=unit_tokens(files),
        )
        read = await sent(redis) - before
    assert result == "success"
    (check,) = [c for c in github.check_runs(REPO) if c.head_sha == head]
    assert check.status == "completed"
    return diff, read


async def held(redis: Redis, key: bytes) -> bytes:
    """Everything a key holds, whatever its type."""
    name = key.decode()
    kind = (await redis.type(name)).decode()
    if kind == "string":
        return bytes(await redis.get(name) or b"")
    if kind == "hash":
        fields = await reply(redis.hgetall(name))
        return b"".join(k + v for k, v in fields.items())
    if kind == "list":
        return b"".join(await reply(redis.lrange(name, 0, -1)))
    if kind == "set":
        return b"".join(await reply(redis.smembers(name)))
    if kind == "zset":
        return b"".join(await redis.zrange(name, 0, -1))
    raise AssertionError(f"{name} is a {kind}")


@pytest.mark.timeout(300)
async def test_a_unit_of_a_large_pull_request_reads_no_more_of_redis_than_one_of_a_small(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    _, small = await review(github, key, redis_url, number=10, count=10)
    _, large = await review(github, key, redis_url, number=100, count=100)

    per_unit_small, per_unit_large = small / 10, large / 100
    assert per_unit_large < 1.25 * per_unit_small, (per_unit_small, per_unit_large)


@pytest.mark.timeout(300)
async def test_a_large_review_leaves_less_than_its_diff_in_redis_and_no_diff_in_clear(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    diff, _ = await review(github, key, redis_url, number=100, count=100)

    line = "value_42 = compute(42, scale=57)"
    assert line in diff
    async with Redis.from_url(redis_url) as redis:
        kept = 0
        for name in [k async for k in redis.scan_iter(match="tiebreak:*", count=1000)]:
            kept += await redis.memory_usage(name) or 0
            ttl = await redis.ttl(name)
            if ttl > DAY or ttl == -1:
                assert line.encode() not in await held(redis, name), name
    assert kept < len(diff.encode()), (kept, len(diff.encode()))
