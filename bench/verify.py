"""What running findings' tests costs.

Part 1, the sandbox's overhead per run: the same small pytest test (and, for the bare cost,
`exit 0`) run N times without a sandbox (`Unsandboxed`) and in bubblewrap's (`Bwrap`), on
the same machine in one run of the benchmark, the two alternating. Printed per command: the
median seconds of a run each way, their ratio and the seconds the sandbox adds to a run
(goal: at most 1.5 times, or at most 0.2 s added).

Part 2, a review's wall time with verification on and off through the engine, is
:func:`review_wall_time`'s.

    uv run python -m bench.verify [--runs N]
"""

import argparse
import asyncio
import os
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path

from app.verification.runner import Limits, Place, Runner
from app.verification.sandbox import Bwrap, sandbox_problem
from app.verification.unsandboxed import Unsandboxed

MODULE = "def total(prices):\n    return sum(prices)\n"
TEST = "from cart import total\n\n\ndef test_total():\n    assert total([5, 7]) == 12\n"
COMMANDS = {
    "a small pytest test": "python -m pytest -q -p no:cacheprovider test_cart.py",
    "exit 0": "exit 0",
}
GOAL_RATIO = 1.5
GOAL_ADDED_S = 0.2


async def sandbox_overhead(runs: int) -> list[tuple[str, float, float]]:
    """Per command: the median seconds of a run without a sandbox and in bubblewrap's."""
    if (problem := sandbox_problem()) is not None:
        raise SystemExit(f"bench.verify needs bubblewrap: {problem}")
    sandbox = Bwrap()
    runners: list[Runner] = [Unsandboxed(), sandbox]
    figures = []
    with tempfile.TemporaryDirectory(prefix="tiebreak-bench-") as directory:
        work = _project(Path(directory), sandbox.owner)
        for name, command in COMMANDS.items():
            seconds: list[list[float]] = [[], []]
            for _ in range(runs):
                for times, runner in zip(seconds, runners, strict=True):
                    run = await runner.run(command, Place(work), Limits())
                    if not run.passed:
                        raise SystemExit(f"{name} did not pass: {run.error or run.output_tail}")
                    times.append(run.seconds)
            figures.append((name, statistics.median(seconds[0]), statistics.median(seconds[1])))
    return figures


def _project(work: Path, owner: int | None) -> Path:
    """A module and its test in `work`, given to `owner` (the sandbox's user) if any."""
    (work / "cart.py").write_text(MODULE)
    (work / "test_cart.py").write_text(TEST)
    if owner is not None:
        for path in (work, *work.iterdir()):
            os.chown(path, owner, owner)
    return work


async def review_wall_time() -> None:
    """Part 2: a review's wall time with verification on and off, through the engine.
    Not measured yet; it prints nothing."""


async def run(runs: int) -> None:
    figures = await sandbox_overhead(runs)
    print(f"sandbox overhead per run, medians of {runs} runs each way")
    print(f"{'command':<22}{'unsandboxed':>12}{'bwrap':>10}{'ratio':>8}{'added':>10}")
    for name, bare, boxed in figures:
        ratio, added = boxed / bare, boxed - bare
        met = "goal met" if ratio <= GOAL_RATIO or added <= GOAL_ADDED_S else "goal missed"
        print(f"{name:<22}{bare:>10.3f} s{boxed:>8.3f} s{ratio:>7.2f}x{added:>+8.3f} s  {met}")
    await review_wall_time()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per command and way")
    args = parser.parse_args(argv)
    asyncio.run(run(args.runs))


if __name__ == "__main__":
    main()
