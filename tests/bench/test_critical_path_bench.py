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
from bench.fleet import PacedModel
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


def test_the_first_review_waits_for_the_workers_start_and_is_left_out_of_the_median(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--units", "2", "--latency", "0.02", "--reviews", "1"])

    out = capsys.readouterr().out
    assert out.startswith("1 warm review, one after another, after the first")
    first, warm = (
        [float(f) for f in figures.split()]
        for figures in re.findall(r"^(?:first|1) +((?:[\d.]+ +){6}[\d.]+)$", out, re.MULTILINE)
    )
    # Before its first call, the first review waited for the worker to start.
    assert first[3] > 2 * warm[3]
    (median,) = re.findall(r"^wall / LLM critical path \(median\) +(\d+\.\d\d)", out, re.MULTILINE)
    assert float(median) == pytest.approx(warm[2], abs=0.006)


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
    # The pull request and its config, then its check run and its diff, then its files' texts:
    # each waits on the last (the installation's token is the one the first review took).
    assert before >= 3 * 0.05
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
