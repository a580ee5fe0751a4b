"""What running findings' tests costs.

Part 1, the sandbox's overhead per run: the same small pytest test (and, for the bare cost,
`exit 0`) run N times without a sandbox (`Unsandboxed`) and in bubblewrap's (`Bwrap`, each
run in a cgroup of its own where the machine has one), on the same machine in one run of the
benchmark, the two alternating; each run copies the project's tree first, as a review's do,
and has the project's own environment (pytest alone), as a review's do.
Printed per command: the median seconds of a run each way, their ratio and the seconds the
sandbox adds to a run (goal: at most 1.5 times, or at most 0.2 s added). The last command,
`exit 0` again, runs in the tree padded with `--files` more files (4 KiB each, a hundred a
directory): what a run's tree costs it, copied or not.

Part 2, a review's wall time with verification on and off through the engine: the same
scripted review of a real project (`tests.scenarios.shop`: an off-by-one proven by its test
and fixed, a false alarm withdrawn) with each model call taking `--latency` seconds, run
without verification and with it in bubblewrap's sandbox, alternating; printed, the medians
and their ratio. A review with tests runs the pre-flight first (the command on a trivial test
at the base), as `tiebreak review --verify` does: printed too, the median seconds from the
verifier's start to the pre-flight's end, which makes the trees the first test would make;
and the review's time with tests split: the tests' own time (while at least one test command
ran, its sandbox included: the union of the runs' spans), the model calls while none ran, and the
rest, which tests cost beyond their own time and the model's (goal ≤ 0.5 s). A
review that does not end as scripted stops the run.

    uv run python -m bench.verify [--runs N] [--reviews N] [--latency S] [--files N]
"""

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.debate.proofs import Proving
from agents.models.llm import LLMRequest
from agents.models.scripted import Reply
from agents.outcome import Resolution
from agents.protocol import ToolName
from agents.review import Review, review_diff
from agents.verification import Run
from app.verification.environments import ProjectPython
from app.verification.local import LocalVerifier
from app.verification.runner import Limits, Place, Runner
from app.verification.sandbox import SandboxUnavailable, sandboxed
from app.verification.unsandboxed import Unsandboxed
from bench.fleet import PacedModel
from policies.verify import VerifyConfig
from tests.scenarios.debates import accept, answers, concede, dispute, evaluations, finding, report
from tests.scenarios.environments import with_pytest
from tests.scenarios.shop import BUG_LINE, COMMAND, FIX, REPRODUCTION, make_project

CART = "shop/cart.py"
EMPTY_CART = "from shop.cart import total\n\n\ndef test_it():\n    assert total([]) == 0\n"

MODULE = "def total(prices):\n    return sum(prices)\n"
TEST = "from cart import total\n\n\ndef test_total():\n    assert total([5, 7]) == 12\n"
COMMANDS = {
    "a small pytest test": "python -m pytest -q -p no:cacheprovider test_cart.py",
    "exit 0": "exit 0",
}
GOAL_RATIO = 1.5
GOAL_ADDED_S = 0.2
GOAL_REST_S = 0.5
FILE_BYTES = 4096
PER_DIRECTORY = 100


class TimedRunner:
    """A runner that notes when each of its runs started and ended."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.spans: list[tuple[float, float]] = []

    @property
    def owner(self) -> int | None:
        return self.runner.owner

    def sees_copy_at(self, path: Path) -> bool:
        return self.runner.sees_copy_at(path)

    async def run(self, command: str, place: Place, limits: Limits) -> Run:
        start = time.monotonic()
        try:
            return await self.runner.run(command, place, limits)
        finally:
            self.spans.append((start, time.monotonic()))


@dataclass(frozen=True)
class Split:
    """One review with tests, split: seconds in all, while tests ran, and the rest."""

    wall: float
    tests: float
    """While at least one test command ran (the pre-flight's included)."""
    model: float
    """While a model call ran and no test did."""

    @property
    def rest(self) -> float:
        return self.wall - self.tests - self.model


def covered(spans: Sequence[tuple[float, float]]) -> float:
    """The seconds that at least one of `spans` covers."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


async def sandbox_overhead(runs: int, files: int) -> list[tuple[str, float, float]]:
    """Per command: the median seconds of a run without a sandbox and in bubblewrap's; the
    last in a tree padded with `files` files."""
    try:
        sandbox = sandboxed()
    except SandboxUnavailable as exc:
        raise SystemExit(f"bench.verify needs bubblewrap: {exc.reason}") from exc
    runners: list[Runner] = [Unsandboxed(), sandbox]
    figures = []
    with tempfile.TemporaryDirectory(prefix="tiebreak-bench-") as directory:
        tree = _project(Path(directory) / "tree", sandbox.owner)
        with_pytest(Path(directory) / "project")
        python = ProjectPython.of(Path(directory) / "project")
        copy = Path(directory) / "copy"
        place = Place(copy, tree=tree, read_only=python.shown(copy), venv=python.venv(copy))
        padded = _padded(Path(directory) / "padded", files, sandbox.owner)
        commands = [(name, command, place) for name, command in COMMANDS.items()]
        commands.append((f"exit 0, {files:,} files", "exit 0", Place(copy, tree=padded)))
        for name, command, where in commands:
            seconds: list[list[float]] = [[], []]
            for _ in range(runs):
                for times, runner in zip(seconds, runners, strict=True):
                    run = await runner.run(command, where, Limits())
                    if not run.passed:
                        raise SystemExit(f"{name} did not pass: {run.error or run.output_tail}")
                    times.append(run.seconds)
            figures.append((name, statistics.median(seconds[0]), statistics.median(seconds[1])))
    return figures


def _padded(work: Path, files: int, owner: int | None) -> Path:
    """A tree of `files` files, a hundred a directory, given to `owner` if any."""
    work.mkdir()
    block = b"x" * FILE_BYTES
    for n in range(files):
        directory = work / f"d{n // PER_DIRECTORY:04}"
        directory.mkdir(exist_ok=True)
        (directory / f"f{n:05}.py").write_bytes(block)
    if owner is not None:
        for root, names, leaves in os.walk(work):
            for name in (root, *(os.path.join(root, n) for n in (*names, *leaves))):
                os.chown(name, owner, owner)
    return work


def _project(work: Path, owner: int | None) -> Path:
    """A module and its test in `work` (new), given to `owner` (the sandbox's user) if any."""
    work.mkdir()
    (work / "cart.py").write_text(MODULE)
    (work / "test_cart.py").write_text(TEST)
    if owner is not None:
        for path in (work, *work.iterdir()):
            os.chown(path, owner, owner)
    return work


async def review_wall_time(
    reviews: int, latency: float
) -> tuple[list[float], list[Split], list[float]]:
    """Part 2: the wall time of the same scripted review of a real project's off-by-one,
    with verification off and on (in bubblewrap's sandbox), alternating; each model call takes
    `latency` seconds. Returns the seconds of each review off, each review on split, and each
    on's pre-flight (the trees it needs made included: the first test would make them)."""
    off: list[float] = []
    on: list[Split] = []
    preflight: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tiebreak-bench-") as directory:
        project = make_project(Path(directory))
        config = VerifyConfig(command=COMMAND)
        for _ in range(reviews):
            for verifying in (False, True):
                sandbox = TimedRunner(sandboxed())
                llm = PacedModel(_two_findings, latency)
                started = time.monotonic()
                if verifying:
                    async with LocalVerifier(
                        project.checkout, project.diff, config, sandbox
                    ) as verifier:
                        if unfit := await verifier.check_environment():
                            raise SystemExit(f"the project's environment cannot run tests: {unfit}")
                        preflight.append(time.monotonic() - started)
                        review = await review_diff(
                            project.diff, llm, proving=Proving(verifier, config.max_attempts)
                        )
                else:
                    review = await review_diff(project.diff, llm)
                wall = time.monotonic() - started
                _check(review, verifying)
                if not verifying:
                    off.append(wall)
                    continue
                tests = covered(sandbox.spans)
                calls = [(c.start, c.end) for c in llm.calls]
                model = covered([*sandbox.spans, *calls]) - tests
                on.append(Split(wall, tests, model))
    return off, on, preflight


def _two_findings(request: LLMRequest) -> Reply:
    """The real off-by-one, proven and fixed; a false alarm, withdrawn (by its test when tests
    run, by the coder's argument when not)."""
    tool, ids = request.tool.name, request.subject
    if tool is ToolName.REPORT_FINDINGS:
        return report(
            {**finding(BUG_LINE, "The first price is skipped.", path=CART),
             "reproduction": REPRODUCTION.model_dump()},
            {**finding(BUG_LINE, "An empty cart raises.", path=CART),
             "reproduction": {"path": "tests/test_empty.py", "content": EMPTY_CART}},
        )  # fmt: skip
    if tool is ToolName.ANSWER_FINDINGS:
        return answers(
            *(concede(i, FIX.model_dump()) if i == "F1" else dispute(i, "It works.") for i in ids)
        )
    return evaluations(*(accept(i, "Right.") for i in ids))


def _check(review: Review, verified: bool) -> None:
    ended = {f.finding.id: f for f in review.findings}
    if [f.resolution for f in ended.values()] != [Resolution.FIXED, Resolution.WITHDRAWN]:
        raise SystemExit(f"the review did not end as scripted: {ended}")
    if verified and ended["F1"].fix_verified is not True:
        raise SystemExit("the off-by-one's fix was not verified")


async def run(runs: int, reviews: int = 3, latency: float = 0.5, files: int = 3000) -> None:
    figures = await sandbox_overhead(runs, files)
    print(f"sandbox overhead per run, medians of {runs} runs each way")
    print(f"{'command':<22}{'unsandboxed':>12}{'bwrap':>10}{'ratio':>8}{'added':>10}")
    for name, bare, boxed in figures:
        ratio, added = boxed / bare, boxed - bare
        met = "goal met" if ratio <= GOAL_RATIO or added <= GOAL_ADDED_S else "goal missed"
        print(f"{name:<22}{bare:>10.3f} s{boxed:>8.3f} s{ratio:>7.2f}x{added:>+8.3f} s  {met}")
    size = files * FILE_BYTES / 2**20
    print(f"(the last in a tree of {files:,} files of {FILE_BYTES:,} bytes, {size:.1f} MiB)")
    off, on, preflight = await review_wall_time(reviews, latency)
    wall_off, wall_on = statistics.median(off), statistics.median(s.wall for s in on)
    tests = statistics.median(s.tests for s in on)
    model = statistics.median(s.model for s in on)
    rest = statistics.median(s.rest for s in on)
    print(f"a review of two findings, {latency:g} s a model call, medians of {reviews} each way:")
    print(
        f"verification off {wall_off:.2f} s · on {wall_on:.2f} s "
        f"({wall_on / wall_off:.2f}x), "
        f"of which the pre-flight {statistics.median(preflight):.2f} s (trees made included)"
    )
    met = "goal met" if rest <= GOAL_REST_S else "goal missed"
    print(
        f"on, split: the tests' own time {tests:.2f} s (while a test ran, its sandbox "
        f"included) · model calls while none ran {model:.2f} s · "
        f"the rest {rest:.2f} s (goal ≤ {GOAL_REST_S} s, {met})"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per command and way")
    parser.add_argument("--reviews", type=int, default=3, help="reviews each way (part 2)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds a model call")
    parser.add_argument(
        "--files", type=int, default=3000, help="files the padded tree of part 1 holds"
    )
    args = parser.parse_args(argv)
    asyncio.run(run(args.runs, args.reviews, args.latency, args.files))


if __name__ == "__main__":
    main()
