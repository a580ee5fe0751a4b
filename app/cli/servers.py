"""`tiebreak serve`, `web` and `worker`: the App's processes, on its settings and Redis.

Only the commands' options are defined here, so that their help and usage errors load nothing
but click; what they run (the web server, the workers, Redis) is :mod:`app.cli.serving`,
imported once a command runs.
"""

import click


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
def serve(host: str, port: int) -> None:
    """Run the web server and a worker in one process.

    With REDIS_URL unset, starts an embedded Redis under TIEBREAK_DATA_DIR.
    """
    from app.cli import serving

    serving.serve(host, port)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
def web(host: str, port: int) -> None:
    """Run the web server alone, on the Redis at REDIS_URL."""
    from app.cli import serving

    serving.web(host, port)


@click.command()
def worker() -> None:
    """Run a worker alone, on the Redis at REDIS_URL (run as many as you like)."""
    from app.cli import serving

    serving.worker()
