"""The large pull request benchmark reviews pull requests of two sizes, checks each was
published once after every unit's debate, and prints the per-unit figures (not judged)."""

import re

import pytest

from bench import large_pr as bench


def test_the_benchmark_prints_per_unit_figures_for_each_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--sizes", "2", "4"])

    out = capsys.readouterr().out
    rows = re.findall(r"^ +([24]) +\d+ KiB +[\d.]+ +[\d.]+ +[\d.]+ +\d+ +\d+$", out, re.MULTILINE)
    assert rows == ["2", "4"]
    for label in ("per-unit time, 4 units / 2 units", "per-unit bytes read, 4 units / 2 units"):
        assert re.search(rf"^{re.escape(label)} +\d+\.\d\d$", out, re.MULTILINE), label
    assert "verified: each review completed once" in out
