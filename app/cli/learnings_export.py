"""What `tiebreak learnings export` does once its options are read (:mod:`app.cli.learnings`):
what a repository taught Tiebreak, as YAML to paste into its `.github/tiebreak.yml`, for teams
that want their learnings reviewed in git.

It reads the Redis the server keeps them in: `--redis-url`, else as `tiebreak status` finds it
(`REDIS_URL`, or the Redis of the `tiebreak serve` on the same data directory,
:mod:`app.cli.server_redis`). Learnings are kept by GitHub's id for the repository: `--repo
OWNER/NAME` finds the id of the latest repository of that name that was taught something (or, for a
repository no review has read since, what an older Tiebreak kept under its name). Each
learning becomes one `{rule, paths}` of the config's `learnings` list, most recent first (the
order reviews read them in), under a comment saying who taught it, when and where; once
pasted, `/tiebreak forget N` removes the learned copy. The list holds what a config accepts:
at most :data:`policies.learnings.MAX_CONFIG_RULES` learnings, within the file's
:data:`policies.config_file.MAX_CONFIG_BYTES`; the older ones left out are said on stderr.
"""

import asyncio
from collections.abc import Sequence
from typing import NamedTuple

import click
import yaml
from pydantic import ValidationError

from app.cli.exits import fail
from app.cli.server_redis import server_redis
from app.settings import Settings, get_settings, settings_problem
from app.store.connection import STORE_ERRORS
from app.store.learnings import LearningStore
from policies.config import parse_config
from policies.config_file import MAX_CONFIG_BYTES
from policies.learnings import MAX_CONFIG_RULES, Learning


class Kept(NamedTuple):
    """A repository's learnings as the store holds them, and where they were found."""

    learnings: list[Learning]
    where: str
    """How the store knows the repository, said on stderr."""


class Exported(NamedTuple):
    """The `learnings` section to paste, and the learnings it leaves out, with why."""

    text: str
    left_out: list[Learning]
    why: str


def export(repo: str, redis_url: str | None) -> None:
    """Print the learnings of `repo` as the config's `learnings` section, from the Redis at
    `redis_url`, else the server's as `status` finds it."""
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        fail(f"--repo must be OWNER/NAME, not {repo!r}")
    url = redis_url or server_redis(_settings())
    try:
        kept = asyncio.run(_read(url, repo))
    except STORE_ERRORS as exc:
        fail(f"cannot reach Redis: {exc}")
    exported = as_config(repo, kept.learnings)
    _, problems = parse_config(exported.text)
    if problems:  # never expected: what is printed must be what the App accepts
        fail(f"the export would not be a valid config: {problems[0]}")
    if kept.where:
        click.echo(kept.where, err=True)
    if exported.left_out:
        numbers = sorted(item.number or 0 for item in exported.left_out)
        click.echo(
            f"{len(numbers)} older learnings (#{numbers[0]} to #{numbers[-1]}) were left out: "
            f"{exported.why}.",
            err=True,
        )
    click.echo(exported.text, nl=False)


def _settings() -> Settings:
    try:
        return get_settings()
    except ValidationError as exc:
        fail(settings_problem(exc))


async def _read(url: str, repo: str) -> Kept:
    async with LearningStore.at(url) as store:
        repository_id = await store.repository_named(repo)
        if repository_id is not None:
            return Kept(await store.all(repository_id), f"{repo} is repository id {repository_id}.")
        named = await store.named(repo)
        if named:
            where = (
                f"These learnings of {repo} were kept under its name by an earlier Tiebreak; "
                "they move under its repository id when Tiebreak next reads them."
            )
            return Kept(named, where)
        return Kept([], "")


def as_config(repo: str, kept: Sequence[Learning]) -> Exported:
    """`kept` (most recent first) as YAML for the config: the `learnings` list, each under a
    comment, as many as a config holds; the rest left out."""
    if not kept:
        return Exported(f"# {repo} has taught Tiebreak nothing yet.\nlearnings: []\n", [], "")
    text = f"# What {repo} taught Tiebreak, most recent first.\nlearnings:\n"
    for count, item in enumerate(kept):
        if count == MAX_CONFIG_RULES:
            return Exported(text, list(kept[count:]), f"a config holds at most {count}")
        entry = _entry(item)
        if len((text + entry).encode()) > MAX_CONFIG_BYTES:
            limit = f"a config file holds at most {MAX_CONFIG_BYTES // 1024} KB"
            return Exported(text, list(kept[count:]), limit)
        text += entry
    return Exported(text, [], "")


def _entry(item: Learning) -> str:
    """One learning of the list, under its comment, indented as the list's items."""
    when = f" on {item.taught_at:%Y-%m-%d}" if item.taught_at else ""
    comment = " ".join(
        f"#{item.number}, taught by {item.taught_by}{when}: {item.thread_url}".split()
    )
    entry = yaml.safe_dump(
        [{"rule": item.rule, "paths": list(item.paths)}],
        allow_unicode=True,
        sort_keys=False,
        width=1_000,
    )
    return f"  # {comment}\n" + "".join(f"  {line}\n" for line in entry.splitlines())
