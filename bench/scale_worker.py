"""One worker process of the fleet benchmark (`bench.scale`): Tiebreak's workers on the fake
GitHub and a scripted model, until SIGTERM; then how many model calls it made, in a file.

    python -m bench.scale_worker OUT --redis-url URL --github-url URL --key-file FILE
                                 --latency SECONDS

(started by :class:`bench.scale_fleet.Fleet`, not by hand). Like `tiebreak`'s entry script
(`app.cli`), this module imports the App only when it runs: a worker's parsing processes
(:mod:`app.parsing`) import the program's main module as they start, and this one should cost
them what `tiebreak`'s does, so that the figures are production's.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path

DAILY_CAP = 10**12


def work(redis_url: str, github_url: str, key_file: Path, latency: float, out: Path) -> None:
    """Run the workers until SIGTERM, then write how many model calls they made to `out`."""
    import asyncio
    import signal

    from app.github.client import GitHubApp
    from app.jobs.deps import WorkerSetup
    from app.jobs.worker import Workers
    from app.settings import Settings
    from bench.fleet import PacedModel
    from tests.scenarios.debates import agreed_by_tool
    from tests.scenarios.reviews import APP_ID

    model = PacedModel(agreed_by_tool, latency)
    deps = WorkerSetup(
        settings=Settings(tiebreak_daily_token_cap=DAILY_CAP),
        github=GitHubApp(APP_ID, key_file.read_text(), github_url, retry=False),
        llm=model,
    )

    async def run() -> None:
        workers = Workers(deps, redis_url)
        stopping: set[asyncio.Task[None]] = set()
        asyncio.get_running_loop().add_signal_handler(
            signal.SIGTERM, lambda: stopping.add(asyncio.create_task(workers.stop()))
        )
        out.with_suffix(".ready").touch()
        await workers.run()
        await asyncio.gather(*stopping)

    try:
        asyncio.run(run())
    finally:
        out.write_text(str(len(model.calls)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--github-url", required=True)
    parser.add_argument("--key-file", type=Path, required=True)
    parser.add_argument("--latency", type=float, required=True)
    args = parser.parse_args(argv)
    work(args.redis_url, args.github_url, args.key_file, args.latency, args.out)


if __name__ == "__main__":
    main()
