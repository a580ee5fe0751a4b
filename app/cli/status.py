"""`tiebreak status`: the live review runs in Redis, redrawn until Ctrl-C
(:mod:`app.cli.status_view`, loaded once the command runs, so that its help and usage errors
load nothing but click)."""

import click


@click.command()
@click.option("--once", is_flag=True, help="Print the live runs once and exit.")
@click.option(
    "--every",
    type=click.FloatRange(min=0.1),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between redraws.",
)
def status(once: bool, every: float) -> None:
    """Show the live review runs on the Redis at REDIS_URL: their units, agents, states,
    heartbeats, rounds and tokens, redrawn every SECONDS until Ctrl-C.

    Without REDIS_URL, the runs of the `tiebreak serve` that runs its own Redis under
    TIEBREAK_DATA_DIR (the same directory: run it where `tiebreak serve` runs).
    """
    from app.cli import status_view

    status_view.show(once, every)
