"""The verification benchmark runs a small test with and without the sandbox, and a review
with verification off and on, and prints its figures (printed, not judged: no timing is
asserted here)."""

import re
import shutil

import pytest

from bench import verify as bench


@pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="no bubblewrap on this machine: install Debian's bubblewrap package (.ci/run does)",
)
async def test_the_benchmark_prints_each_commands_medians_ratio_and_added_seconds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    await bench.run(runs=2, reviews=1, latency=0.0, files=200)

    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "sandbox overhead per run, medians of 2 runs each way"
    figures = r" +\d+\.\d{3} s +\d+\.\d{3} s +\d+\.\d\dx +[+-]\d+\.\d{3} s  goal (met|missed)"
    names = [*bench.COMMANDS, "exit 0, 200 files"]
    assert len(rows) == 2 + len(names) + 4
    for row, name in zip(rows[2:-4], names, strict=True):
        assert re.fullmatch(re.escape(name) + figures, row), row
    assert rows[-4] == "(the last in a tree of 200 files of 4,096 bytes, 0.8 MiB)"
    # The same review with verification off and on: it ended as scripted both ways.
    assert rows[-3] == "a review of two findings, 0 s a model call, medians of 1 each way:"
    assert re.fullmatch(
        r"verification off \d+\.\d\d s · on \d+\.\d\d s \(\d+\.\d\dx\), "
        r"of which the pre-flight \d+\.\d\d s \(trees made included\)",
        rows[-2],
    )
    assert re.fullmatch(
        r"on, split: the tests' own time \d+\.\d\d s \(while a test ran, its sandbox "
        r"included\) · model calls while none ran \d+\.\d\d s · the rest -?\d+\.\d\d s "
        r"\(goal ≤ 0\.5 s, goal (met|missed)\)",
        rows[-1],
    )
