"""The recall benchmark mines the cases its history describes and prints both recalls and the
context's cost at three budgets (figures are printed, not judged)."""

import re
from pathlib import Path

import pytest

from app.evaluation.history import Mining, mine_cases
from bench import context_recall as bench
from bench.recall_history import make_history


def test_each_bug_of_the_history_is_mined_on_the_line_that_misuses_an_import(
    tmp_path: Path,
) -> None:
    cases = mine_cases(Mining(make_history(tmp_path), "recall-shop"))

    labelled = {(b.path, b.lines) for c in cases if c.buggy for b in c.bug}
    assert labelled == {
        ("shop/orders.py", (10,)),
        ("shop/checkout.py", (9,)),
        ("shop/receipts.py", (8,)),
        ("shop/tax.py", (8,)),
    }


def test_the_benchmark_prints_both_recalls_at_three_budgets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "none.jsonl").write_text("")

    bench.main(["--cases", str(tmp_path / "none.jsonl")])

    out = capsys.readouterr().out
    assert "4 buggy cases; cross-file part measured on 4, 4 of them with imported names" in out
    rows = re.findall(r"^ +x(0\.5|1|2) +(\d\.\d\d) +(\d\.\d\d) +(\d+\.\d\d) +\d+\.\d\d$", out, re.M)
    assert [row[0] for row in rows] == ["0.5", "1", "2"]
    # Every definition the bugs misuse is found in another module and shown.
    assert {row[2] for row in rows} == {"1.00"}


def test_a_scope_shown_in_part_counts_only_the_lines_it_shows() -> None:
    context = (
        "shop/a.py lines 1-3: function helper, called by a change\n"
        "    1 def helper():\n"
        "shop/b.py lines 5-20 (shown in part): function total, around a change\n"
        "    5 def total(items):\n"
        "      … lines 6–9 not shown …\n"
        "   10     return sum(items)\n"
    )

    assert set(bench.numbered(context)) == {("shop/a.py", 1), ("shop/b.py", 5), ("shop/b.py", 10)}
