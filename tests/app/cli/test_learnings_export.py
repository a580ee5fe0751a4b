"""`tiebreak learnings export`: a repository's learnings as YAML the config accepts."""

import asyncio
from datetime import UTC, datetime

from click.testing import CliRunner, Result

from app.cli.main import main
from app.store.learnings import LearningStore
from policies.config import parse_config
from policies.learnings import LearnedRule, Learning, LearningSource

REPO = "octo/shop"
TRICKY = 'Amounts are "cents": #not a comment, {not: a map}; do not flag division.'


def tiebreak(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, ["learnings", "export", *args], env=env)


def keep(redis_url: str, *rules: tuple[str, str]) -> None:
    async def record() -> None:
        async with LearningStore.at(redis_url) as store:
            for rule, glob in rules:
                await store.record(
                    REPO,
                    Learning(
                        rule=rule,
                        paths=(glob,),
                        source=LearningSource.WITHDRAWN,
                        taught_by="octocat",
                        taught_at=datetime(2025, 3, 1, tzinfo=UTC),
                        thread_url=f"https://github.com/{REPO}/pull/1#discussion_r7",
                    ),
                )

    asyncio.run(record())


def test_export_prints_the_learnings_as_the_configs_list_most_recent_first(
    redis_url: str,
) -> None:
    keep(redis_url, ("Prefer pathlib.", "tools/**"), (TRICKY, "billing/**"))

    result = tiebreak("--repo", REPO, "--redis-url", redis_url)

    assert result.exit_code == 0, result.output
    assert "  # #2, taught by octocat on 2025-03-01: https://github.com/" in result.output
    config, problems = parse_config(result.output)
    assert problems == []
    assert config.learnings.rules == (
        LearnedRule(rule=TRICKY, paths=("billing/**",)),
        LearnedRule(rule="Prefer pathlib.", paths=("tools/**",)),
    )


def test_export_reads_redis_url_and_says_when_there_is_nothing(redis_url: str) -> None:
    result = tiebreak("--repo", "octo/empty", env={"REDIS_URL": redis_url})

    assert result.exit_code == 0, result.output
    assert parse_config(result.output) == parse_config("")


def test_export_needs_a_repository_and_a_redis(redis_url: str) -> None:
    bad_repo = tiebreak("--repo", "shop", "--redis-url", redis_url)
    no_redis = tiebreak("--repo", REPO, env={"REDIS_URL": None})

    assert bad_repo.exit_code == no_redis.exit_code == 2
    assert "--repo must be OWNER/NAME" in bad_repo.output
    assert "REDIS_URL is not set" in no_redis.output
