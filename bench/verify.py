"""What running findings' tests costs.

Part 1, the sandbox's overhead per run: the same small pytest test (and, for the bare cost,
`exit 0`) run N times without a sandbox (`Unsandboxed`) and in bubblewrap's (`Bwrap`, each
run in a cgroup of its own where the machine has one), on the same machine in one run of the
benchmark, the two alternating; each run copies the project's tree first, as a review's do,
and has the project's own environment (pytest alone), as a review's do.
Printed per command: the median seconds of a run each way, their ratio and the seconds the
sandbox adds to a run (goal: at most 1.5 times, or at most 0.2 s added).

Part 2, a review's wall time with verification on and off through the engine: the same
scripted review of a real project (`tests.scenarios.shop`: an off-by-one proven by its test
and fixed, a false alarm withdrawn) with each model call taking `--latency` seconds, run
without verification and with it in bubblewrap's sandbox, alternating; printed, the medians
and their ratio. A review with tests runs the pre-flight first (the command on a trivial test
at the base), as `tiebreak review --verify` does: printed too, the median seconds from the
verifier's start to the pre-flight's end, which makes the trees the first test would make. A
review that does not end as scripted stops the run.

    uv run python -m bench.verify [--runs N] [--reviews N] [--latency S]
"""

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from agents.debate.proofs import Proving
from agents.models.llm import LLMRequest
from agents.models.scripted import Reply
from agents.outcome import Resolution
from agents.protocol import ToolName
from agents.review import Review, review_diff
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


async def sandbox_overhead(runs: int) -> list[tuple[str, float, float]]:
    """Per command: the median seconds of a run without a sandbox and in bubblewrap's."""
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
        for name, command in COMMANDS.items():
            seconds: list[list[float]] = [[], []]
            for _ in range(runs):
                for times, runner in zip(seconds, runners, strict=True):
                    run = await runner.run(command, place, Limits())
                    if not run.passed:
                        raise SystemExit(f"{name} did not pass: {run.error or run.output_tail}")
                    times.append(run.seconds)
            figures.append((name, statistics.median(seconds[0]), statistics.median(seconds[1])))
    return figures


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
) -> tuple[list[float], list[float], list[float]]:
    """Part 2: the wall time of the same scripted review of a real project's off-by-one,
    with verification off and on (in bubblewrap's sandbox), alternating; each model call takes
    `latency` seconds. Returns the seconds of each review, off and on, and of each on's
    pre-flight (the trees it needs made included: the first test would make them)."""
    off: list[float] = []
    on: list[float] = []
    preflight: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tiebreak-bench-") as directory:
        project = make_project(Path(directory))
        config = VerifyConfig(command=COMMAND)
        sandbox = sandboxed()
        for _ in range(reviews):
            for verifying in (False, True):
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
                (on if verifying else off).append(time.monotonic() - started)
                _check(review, verifying)
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


async def run(runs: int, reviews: int = 3, latency: float = 0.5) -> None:
    figures = await sandbox_overhead(runs)
    print(f"sandbox overhead per run, medians of {runs} runs each way")
    print(f"{'command':<22}{'unsandboxed':>12}{'bwrap':>10}{'ratio':>8}{'added':>10}")
    for name, bare, boxed in figures:
        ratio, added = boxed / bare, boxed - bare
        met = "goal met" if ratio <= GOAL_RATIO or added <= GOAL_ADDED_S else "goal missed"
        print(f"{name:<22}{bare:>10.3f} s{boxed:>8.3f} s{ratio:>7.2f}x{added:>+8.3f} s  {met}")
    off, on, preflight = await review_wall_time(reviews, latency)
    print(f"a review of two findings, {latency:g} s a model call, medians of {reviews} each way:")
    print(
        f"verification off {statistics.median(off):.2f} s · on {statistics.median(on):.2f} s "
        f"({statistics.median(on) / statistics.median(off):.2f}x), "
        f"of which the pre-flight {statistics.median(preflight):.2f} s (trees made included)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per command and way")
    parser.add_argument("--reviews", type=int, default=3, help="reviews each way (part 2)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds a model call")
    args = parser.parse_args(argv)
    asyncio.run(run(args.runs, args.reviews, args.latency))


if __name__ == "__main__":
    main()
