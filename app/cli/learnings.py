"""`tiebreak learnings export`: what a repository taught Tiebreak, as YAML to paste into its
`.github/tiebreak.yml`, for teams that want their learnings reviewed in git.

It reads the Redis the server keeps them in (`--redis-url`, or `REDIS_URL` as `tiebreak
status` reads it). Each learning becomes one `{rule, paths}` of the config's `learnings` list,
most recent first (the order reviews read them in), under a comment saying who taught it,
when and where; once pasted, `/tiebreak forget N` removes the learned copy.
"""

import asyncio
from collections.abc import Sequence

import click
import yaml

from app.cli.exits import fail
from app.settings import get_settings
from app.store.connection import STORE_ERRORS
from app.store.learnings import LearningStore
from policies.learnings import Learning


@click.group()
def learnings() -> None:
    """What repositories taught Tiebreak."""


@learnings.command()
@click.option("--repo", required=True, metavar="OWNER/NAME", help="The repository.")
@click.option(
    "--redis-url", metavar="URL", help="The server's Redis (default: REDIS_URL, as for status)."
)
def export(repo: str, redis_url: str | None) -> None:
    """Print the learnings of OWNER/NAME as the `learnings` section of .github/tiebreak.yml."""
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        fail(f"--repo must be OWNER/NAME, not {repo!r}")
    url = redis_url or get_settings().redis_url
    if url is None:
        fail("REDIS_URL is not set: give --redis-url, the Redis the server keeps learnings in")
    try:
        kept = asyncio.run(_read(url, repo))
    except STORE_ERRORS as exc:
        fail(f"cannot reach Redis: {exc}")
    click.echo(as_config(repo, kept), nl=False)


async def _read(url: str, repo: str) -> list[Learning]:
    async with LearningStore.at(url) as store:
        return await store.all(repo)


def as_config(repo: str, kept: Sequence[Learning]) -> str:
    """`kept` as YAML for the config: the `learnings` list, each under a comment."""
    if not kept:
        return f"# {repo} has taught Tiebreak nothing yet.\nlearnings: []\n"
    lines = [f"# What {repo} taught Tiebreak, most recent first.", "learnings:"]
    for item in kept:
        when = f" on {item.taught_at:%Y-%m-%d}" if item.taught_at else ""
        lines.append(f"  # #{item.number}, taught by {item.taught_by}{when}: {item.thread_url}")
        entry = yaml.safe_dump(
            [{"rule": item.rule, "paths": list(item.paths)}],
            allow_unicode=True,
            sort_keys=False,
            width=1_000,
        )
        lines += [f"  {line}" for line in entry.splitlines()]
    return "\n".join(lines) + "\n"
