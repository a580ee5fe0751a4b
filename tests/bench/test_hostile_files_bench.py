"""The hostile-file benchmark serves Tiebreak, reviews the pull requests it describes and
prints a row per size and way (figures are printed, not judged: no timing is asserted here)."""

import re

import pytest

from bench import hostile_files as bench


async def test_the_benchmark_prints_a_row_per_size_and_way(
    capsys: pytest.CaptureFixture[str],
) -> None:
    await bench.run([300, 600], in_place_max=300)

    rows = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"parsing processes started in \d+\.\d\d s", rows[0])
    figures = r" +\d+\.\d\d +\d+ +\d+\.\d{3}  "
    expected = [
        ("300", "in place", "(parsed)"),
        ("300", "review", "(parsed, in a worker process)"),
        ("600", "review", "(parsed, in a worker process)"),
    ]
    assert len(rows) == 2 + len(expected)
    for row, (size, way, told) in zip(rows[2:], expected, strict=True):
        assert re.fullmatch(rf" +{size}  {way} *{figures}{re.escape(told)}", row), row
