"""The command-parsing benchmark parses comments of GitHub's largest size and prints its
figures (printed, not judged: no timing is asserted here)."""

import re

import pytest

from bench import commands as bench


def test_every_shape_is_a_comment_of_githubs_largest_size() -> None:
    assert {len(body) for body in bench.SHAPES.values()} == {bench.COMMENT_LIMIT}


def test_the_benchmark_prints_each_shapes_parse_time_and_the_commands_taken(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--repeat", "1"])

    out = capsys.readouterr().out
    taken = {
        "distinct unknown commands": 1,
        "distinct budgets": 2,  # the last line, cut short, is one unknown line
        "every command, then distinct ones": 5,
        "prose, no command": 0,
    }
    for shape, commands in taken.items():
        assert re.search(rf"^{re.escape(shape)} +\d+\.\d\d +{commands}$", out, re.MULTILINE), shape
