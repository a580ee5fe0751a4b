"""The fleet benchmark queues reviews for worker processes, checks that each was done exactly
once, and prints its figures (printed, not judged: no timing is asserted here)."""

import re

import pytest

from bench import scale as bench
from bench.fleet import TimedGitHub, open_pulls, publication_problems
from tests.fakes.github_api import new_app_key
from tests.scenarios.reviews import DIFF


def test_the_benchmark_prints_its_figures_after_checking_every_review(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--pulls", "12", "--workers", "2", "--latency", "0.01", "--idle", "1"])

    out = capsys.readouterr().out
    assert re.search(r"^throughput \(reviews/s\) +[\d,.]+   12 in [\d.]+ s", out, re.MULTILINE)
    assert re.search(
        r"^worker CPU per review \(s\) +\d+\.\d{3}   goal ≤ 0\.1; [\d.]+ s on 2 workers$",
        out,
        re.MULTILINE,
    )
    assert re.search(
        r"^idle worker CPU \(% of a core\) +\d+\.\d\d   goal < 2; the busiest worker over 1 s",
        out,
        re.MULTILINE,
    )
    for label in (
        "time to review p50 (s)",
        "time to review p99 (s)",
        "  waiting for a worker p50 (s)",
        "  in review p99 (s)",
        "Redis used_memory_peak",
    ):
        assert re.search(rf"^{re.escape(label)} +[\d,.]+", out, re.MULTILINE), label
    for moment in ("before", "after"):
        assert re.search(
            rf"^Redis used_memory {moment} +[\d.]+ MiB   [\d,]+ keys$", out, re.MULTILINE
        )
    calls = re.search(r"^model calls by worker +(\d+), (\d+)$", out, re.MULTILINE)
    assert calls is not None
    assert sum(int(c) for c in calls.groups()) == 36
    assert (
        "verified: 12 of 12 pull requests have exactly one check run, completed neutral, and "
        "exactly one review; 36 model calls = 3 for each of 12 reviews"
    ) in out
    assert "FAILED" not in out


def test_a_pull_request_without_its_one_check_run_and_review_fails_the_run() -> None:
    with TimedGitHub(new_app_key()) as github:
        refs = open_pulls(github, [1, 2], DIFF, base_files={}, head_files={})

        problems = publication_problems(github, refs, bench.CONCLUSION)

    assert problems == [
        "#1: check runs [], not one completed neutral",
        "#1: 0 reviews, not one",
        "#2: check runs [], not one completed neutral",
        "#2: 0 reviews, not one",
    ]
