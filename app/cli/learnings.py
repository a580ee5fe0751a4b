"""`tiebreak learnings export`: what a repository taught Tiebreak, as YAML to paste into its
`.github/tiebreak.yml` (:mod:`app.cli.learnings_export`, loaded once the command runs, so that
its help and usage errors load nothing but click)."""

import click


@click.group()
def learnings() -> None:
    """What repositories taught Tiebreak."""


@learnings.command()
@click.option("--repo", required=True, metavar="OWNER/NAME", help="The repository.")
@click.option(
    "--redis-url",
    metavar="URL",
    help="The server's Redis (default: as for status, REDIS_URL or serve's own).",
)
def export(repo: str, redis_url: str | None) -> None:
    """Print the learnings of OWNER/NAME as the `learnings` section of .github/tiebreak.yml:
    the most recent a config holds (50, within 64 KB), the others named on stderr."""
    from app.cli import learnings_export

    learnings_export.export(repo, redis_url)
