"""The critical-path benchmark reviews a many-unit pull request, checks it was published once
after every unit's whole debate, and prints its figures (the ratio's goal is not judged)."""

import asyncio
import re
import time
from pathlib import Path

import pytest

from agents.debate.machine import DebateMachine
from agents.debate.needs import AskModel
from agents.diff import Diff
from agents.models.llm import LLMRequest
from bench import critical_path as bench
from bench.fleet import Call, PacedModel
from policies.debate import DebatePolicy
from tests.scenarios.debates import git_diff


def test_the_benchmark_prints_the_ratio_after_checking_the_review(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--units", "4", "--latency", "0.02", "--reviews", "2"])

    out = capsys.readouterr().out
    assert out.startswith("2 warm reviews, one after another, after the first (as the worker")
    rows = re.findall(r"^(\w+) +((?:[\d.]+ +){6}[\d.]+)$", out, re.MULTILINE)
    assert [n for n, _ in rows] == ["first", "1", "2"]
    for _, figures in rows:
        wall, critical, ratio, *_ = (float(f) for f in figures.split())
        assert critical >= 5 * 0.02
        assert ratio == pytest.approx(wall / critical, rel=0.01)
    assert re.search(
        r"^wall / LLM critical path \(median\) +\d+\.\d\d   goal ≤ 1\.10$", out, re.MULTILINE
    )
    for figure in ("commands", "reads"):
        assert re.search(rf"^Redis {figure} per model call +\d+\.\d$", out, re.MULTILINE)
    assert (
        "verified: each review, the first too, completed once (one check run, completed "
        "neutral, and one review) after 5 model calls on each of its 4 units"
    ) in out


def test_the_first_review_is_printed_apart_and_left_out_of_the_median() -> None:
    def review(before: float, calls: float) -> bench.Review:
        # Two units, each with one call of `calls` seconds; the check run completes at once.
        unit_calls = [Call(unit, before, before + calls) for unit in ("a.py", "b.py")]
        return bench.Review(0.0, before + calls, unit_calls)

    # The first review waited 0.8 s for the worker to start; the warm ones waited 0.05 and 0.07.
    measured = bench.Measured(
        first=review(0.8, 0.1),
        reviews=[review(0.05, 1.0), review(0.07, 1.0)],
        traffic=bench.Traffic(commands=80, reads=40),
    )

    out = bench.report(measured, units=2, latency=0.2)

    assert out.startswith("2 warm reviews, one after another, after the first (as the worker")
    rows = dict(re.findall(r"^(\w+) +((?:[\d.]+ +){6}[\d.]+)$", out, re.MULTILINE))
    assert [float(f) for f in rows["first"].split()][:4] == [0.9, 0.1, 9.0, 0.8]
    # The median of the warm reviews' 1.05 and 1.07, the first's 9.00 left out of it.
    assert re.search(r"^wall / LLM critical path \(median\) +1\.06   goal", out, re.MULTILINE)
    # Redis's traffic is the warm reviews' over their 4 calls.
    assert re.search(r"^Redis commands per model call +20\.0$", out, re.MULTILINE)
    assert re.search(r"^Redis reads per model call +10\.0$", out, re.MULTILINE)


def test_each_file_of_the_pull_request_is_a_unit_of_its_own() -> None:
    units = Diff.parse(git_diff(bench.changed_files(20))).units(bench.UNIT_TOKENS)

    assert [u.diff.paths for u in units] == [(f"service/module_{n:02}.py",) for n in range(20)]


def test_with_before_the_other_checkout_is_measured_first_and_both_printed(
    capfd: pytest.CaptureFixture[str],
) -> None:
    this_checkout = Path(bench.__file__).resolve().parents[1]

    bench.main(
        ["--units", "2", "--latency", "0.02", "--reviews", "1", "--before", str(this_checkout)]
    )

    out = capfd.readouterr().out
    before, after = out.split("after (this checkout):")
    assert before.startswith(f"before ({this_checkout}):")
    for printed in (before, after):
        assert re.search(r"^wall / LLM critical path \(median\) +\d+\.\d\d", printed, re.MULTILINE)


def test_a_github_that_takes_its_time_shows_in_the_windows_around_the_calls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--units", "2", "--latency", "0.02", "--reviews", "1", "--github-latency", "0.05"])

    out = capsys.readouterr().out
    assert "; GitHub answering after 50 ms" in out
    (row,) = re.findall(r"^1 +((?:[\d.]+ +){6}[\d.]+)$", out, re.MULTILINE)
    *_, before, _, _, after = (float(f) for f in row.split())
    # The pull request, its config and its diff, then its check run and its files' texts:
    # each waits on the last (the installation's token is the one the first review took).
    assert before >= 2 * 0.05
    # Its threads, then its review, then its check run completed.
    assert after >= 3 * 0.05


async def test_a_call_ends_when_the_model_answers_not_when_a_busy_loop_reads_it() -> None:
    model = PacedModel(bench.two_rounds, 0.05)
    request = first_request()

    async def asked_then_busy() -> None:
        await model.complete(request)
        time.sleep(0.1)  # noqa: ASYNC251 - the loop kept busy by what the answer started

    await asyncio.gather(asked_then_busy(), model.complete(request))

    # Asked together, answered together: the loop's lag after the first is not the second's.
    assert len(model.calls) == 2
    assert all(0.05 <= c.end - c.start < 0.05 + 0.1 for c in model.calls)


def first_request() -> LLMRequest:
    """The tester's first request on a unit of the benchmark's pull request."""
    (unit,) = Diff.parse(git_diff(bench.changed_files(1))).units(bench.UNIT_TOKENS)
    need = next(DebateMachine(DebatePolicy(), unit).run())
    assert isinstance(need, AskModel)
    return need.request
