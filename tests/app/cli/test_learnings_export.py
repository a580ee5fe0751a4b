"""`tiebreak learnings export`: a repository's learnings as YAML the config accepts."""

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner, Result

from app.cli.main import main
from app.store import keys
from app.store.learnings import LearningStore, Repository
from app.store.redis_typing import reply
from policies.config import parse_config
from policies.learnings import LearnedRule, Learning, LearningSource

REPO = "octo/shop"
REPO_ID = 5_150
TRICKY = 'Amounts are "cents": #not a comment, {not: a map}; do not flag division.'


def tiebreak(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, ["learnings", "export", *args], env=env)


def keep(redis_url: str, *rules: tuple[str, str], repository_id: int = REPO_ID) -> None:
    async def record() -> None:
        async with LearningStore.at(redis_url) as store:
            for rule, glob in rules:
                await store.record(
                    Repository(repository_id, REPO),
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
    assert "  # #2, taught by octocat on 2025-03-01: https://github.com/" in result.stdout
    config, problems = parse_config(result.stdout)
    assert problems == []
    assert config.learnings.rules == (
        LearnedRule(rule=TRICKY, paths=("billing/**",)),
        LearnedRule(rule="Prefer pathlib.", paths=("tools/**",)),
    )


def test_export_reads_redis_url_and_says_when_there_is_nothing(redis_url: str) -> None:
    result = tiebreak("--repo", "octo/empty", env={"REDIS_URL": redis_url})

    assert result.exit_code == 0, result.output
    assert parse_config(result.stdout) == parse_config("")


def test_export_needs_a_repository_and_a_redis(redis_url: str) -> None:
    bad_repo = tiebreak("--repo", "shop", "--redis-url", redis_url)
    no_redis = tiebreak("--repo", REPO, env={"REDIS_URL": None})

    assert bad_repo.exit_code == no_redis.exit_code == 2
    assert "--repo must be OWNER/NAME" in bad_repo.output
    assert "REDIS_URL is not set" in no_redis.output


def test_export_of_more_than_a_config_holds_keeps_the_most_recent_and_says_so(
    redis_url: str, tmp_path: Path
) -> None:
    keep(redis_url, *((f"Rule number {n} holds here.", f"dir{n}/**") for n in range(1, 201)))

    result = tiebreak("--repo", REPO, "--redis-url", redis_url)

    assert result.exit_code == 0, result.output
    pasted = tmp_path / ".github" / "tiebreak.yml"
    pasted.parent.mkdir()
    pasted.write_text(result.stdout, encoding="utf-8")
    checked = CliRunner().invoke(main, ["check-config", str(pasted)])
    assert checked.exit_code == 0, checked.output
    config, problems = parse_config(result.stdout)
    assert problems == []
    assert config.learnings.rules == tuple(
        LearnedRule(rule=f"Rule number {n} holds here.", paths=(f"dir{n}/**",))
        for n in range(200, 150, -1)
    )
    assert "150 older learnings (#1 to #150) were left out" in result.stderr


def test_export_stays_within_the_size_of_a_config_file(redis_url: str) -> None:
    # 50 rules of 300 characters, 4 bytes each: ~60 KB of rules alone, comments besides.
    rules = [(f"{n:03d}" + "🦀" * 296 + ".", f"crate{n}/**") for n in range(1, 51)]
    keep(redis_url, *rules)

    result = tiebreak("--repo", REPO, "--redis-url", redis_url)

    assert result.exit_code == 0, result.output
    config, problems = parse_config(result.stdout)
    assert problems == []
    assert len(result.stdout.encode()) <= 64 * 1024
    exported = [rule.rule for rule in config.learnings.rules]
    assert exported == [rule for rule, _ in reversed(rules)][: len(exported)]
    left = 50 - len(exported)
    assert left > 0
    assert f"{left} older learnings (#1 to #{left}) were left out" in result.stderr
    assert "64 KB" in result.stderr


def test_export_reads_the_latest_repository_of_the_name(redis_url: str) -> None:
    keep(redis_url, ("Prefer pathlib.", "tools/**"))
    # The repository is deleted; another of the same name is taught something.
    keep(redis_url, ("Amounts are cents.", "billing/**"), repository_id=REPO_ID + 1)

    result = tiebreak("--repo", "Octo/Shop", "--redis-url", redis_url)

    assert result.exit_code == 0, result.output
    config, _ = parse_config(result.stdout)
    assert config.learnings.rules == (
        LearnedRule(rule="Amounts are cents.", paths=("billing/**",)),
    )
    assert f"Octo/Shop is repository id {REPO_ID + 1}." in result.stderr


def test_export_reads_what_an_older_tiebreak_kept_under_the_name(redis_url: str) -> None:
    learning = Learning(rule="Prefer pathlib.", paths=("tools/**",), source=LearningSource.RESOLVED)

    async def keep_under_name() -> None:
        async with LearningStore.at(redis_url) as store:
            body = learning.model_dump_json(exclude={"number"})
            await reply(store.redis.hset(keys.named_learnings(REPO), "4", body))

    asyncio.run(keep_under_name())

    result = tiebreak("--repo", REPO, "--redis-url", redis_url)

    assert result.exit_code == 0, result.output
    config, _ = parse_config(result.stdout)
    assert config.learnings.rules == (LearnedRule(rule="Prefer pathlib.", paths=("tools/**",)),)
    assert "kept under its name by an earlier Tiebreak" in result.stderr
