"""The shipped real-bug cases: each parses and splits with the engine's diff model, and each
label points at new-side lines of its own diff."""

from pathlib import Path

import pytest

from agents.diff import Diff
from app.evaluation.cases import Case, parse_cases

ROOT = Path(__file__).resolve().parents[3]
CASES_DIR = ROOT / "eval" / "cases"
SHIPPED = parse_cases((CASES_DIR / "real-bugs.jsonl").read_text(encoding="utf-8").splitlines())


def test_the_shipped_set_is_whole_and_licensed() -> None:
    assert len(SHIPPED) == 37
    assert sum(c.buggy for c in SHIPPED) == 28
    licences = (CASES_DIR / "LICENSES.md").read_text(encoding="utf-8")
    for case in SHIPPED:
        assert case.license
        assert case.introducing_commit in licences, case.id


@pytest.mark.parametrize("case", SHIPPED, ids=[c.id for c in SHIPPED])
def test_a_shipped_case_parses_splits_and_labels_new_lines(case: Case) -> None:
    diff = Diff.parse(case.diff)
    units = diff.units()

    assert units
    assert {f.path for u in units for f in u.diff.files} <= set(diff.paths)
    for location in case.bug:
        diff_file = diff.file(location.path)
        assert diff_file is not None, location.path
        assert set(location.lines) <= diff_file.right_lines(), location
        # The labelled lines reach the tester: some unit shows them.
        assert any(
            (f := u.diff.file(location.path)) and set(location.lines) & f.right_lines()
            for u in units
        )
    for path in case.files:
        assert diff.file(path) is not None, path
