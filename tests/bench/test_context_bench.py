"""The context benchmark builds the reviews it describes and prints a row for each (figures
are printed, not judged: no timing is asserted here)."""

import ast
import re
from collections import Counter

import pytest

from bench import context as bench


def test_the_large_review_has_the_files_and_hunks_it_describes() -> None:
    case = bench.large_case()

    python, typescript = case.sources["orders/ledger.py"], case.sources["web/cart.ts"]
    assert (python.count("\n"), typescript.count("\n")) == (3_000, 2_000)
    ast.parse(python)
    hunks = [h for unit in case.units for f in unit.diff.files for h in f.hunks]
    assert Counter(h.path for h in hunks) == dict.fromkeys(case.sources, bench.HUNKS)
    # One changed line each, with git's three lines of context either side.
    assert {h.target_length for h in hunks} == {7}


def test_the_benchmark_prints_each_reviews_cpu_time(capsys: pytest.CaptureFixture[str]) -> None:
    bench.measure(bench.critical_path_case(), reviews=1)
    bench.measure(bench.large_case(), reviews=1)

    rows = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"critical path: 20 units .* +20 +[\d,]+ +\d+\.\d\d +\d+\.\d\d", rows[0])
    assert re.fullmatch(r"large: 3,000-line .py .* +2 +[\d,]+ +\d+\.\d\d +\d+\.\d\d", rows[1])
