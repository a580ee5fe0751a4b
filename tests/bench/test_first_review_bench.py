"""The first-review benchmark starts `tiebreak serve` as a process, reviews two pull requests
on it and prints each review's wall time and overhead (printed, not judged: no timing is
asserted here)."""

import re

import pytest

from bench import first_review as bench


def test_the_benchmark_prints_both_reviews_of_a_fresh_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--runs", "1", "--latency", "0", "--settle", "0"])

    out = capsys.readouterr().out
    assert re.search(r"^1 +(-?\d+\.\d{3} +){7}-?\d+\.\d{3}$", out, re.M), out
    assert re.search(
        r"^first review's overhead \(median\): -?\d+\.\d{3} s \(\d+\.\d{3} s before its first "
        r"model call, \d+\.\d{3} s after its last\); second's: ",
        out,
        re.M,
    ), out
