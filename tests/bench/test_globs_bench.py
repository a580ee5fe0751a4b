"""The glob benchmark reads configs holding hostile globs and prints how long their matches
take (printed, not judged: no timing is asserted here)."""

import re

import pytest

from bench import globs as bench


def test_the_benchmark_prints_a_row_for_each_glob_and_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--wildcards", "8", "--lengths", "40", "200", "--questions", "7", "--repeat", "1"])

    rows = re.findall(r"^(\*a.*?) +([\d,]+) +\d+\.\d\d +\d+\.\d{3}$", capsys.readouterr().out, re.M)
    assert rows == [
        ("*a times 8, then b", "43"),
        ("*a times 8, then b", "203"),
        ("*a, then ? times 7", "43"),
        ("*a, then ? times 7", "203"),
    ]


def test_a_config_the_benchmark_cannot_read_stops_it() -> None:
    with pytest.raises(SystemExit, match="refused"):
        bench.read("paths:\n  exclude: ['x[z-a]y']\n")
