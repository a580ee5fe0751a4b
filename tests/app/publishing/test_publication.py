"""What a run's record gives back of its review units: each unit's own slice of the run's diff,
as the run cut it, for the arbiter of a later command or the tester weighing a reply."""

from agents.diff import Diff
from agents.review import Review
from app.publishing.publication import RunRecord, UnitReading, unit_files
from app.publishing.rereview import RunScope
from tests.scenarios.debates import git_diff
from tests.scenarios.reviews import REF


def module(lines: int, step: int = 1) -> str:
    return "".join(f"VALUE_{n:05} = {n * step}\n" for n in range(lines))


CORE, EXTRA = module(3000), module(3000, 2)
WHOLE = Diff.parse(git_diff({"app/core.py": (None, CORE), "app/extra.py": (None, EXTRA)}))


def record(diff: Diff, **kept: object) -> RunRecord:
    return RunRecord.model_validate(
        {
            "run_id": "r",
            "ref": REF,
            "check_run_id": 1,
            "conclusion": "neutral",
            "review": Review(units=[]),
            "diff": diff.text,
            **kept,
        }
    )


def test_a_rescoped_runs_units_are_those_it_debated() -> None:
    (unit,) = RunScope.changed_since("a" * 40, frozenset({"app/extra.py"})).part(WHOLE).units()
    reading = UnitReading(context="around refund")

    units = record(
        WHOLE, unit_files={unit.id: unit_files(unit, WHOLE)}, readings={unit.id: reading}
    ).review_units()

    assert list(units) == ["u1"]
    assert units["u1"].diff.text == unit.diff.text
    assert units["u1"].context == "around refund"


def test_a_file_cut_at_hunk_boundaries_gives_each_unit_its_own_hunks() -> None:
    changed = "".join(f"VALUE_{n:05} = {-n if n % 40 == 0 else n}\n" for n in range(3000))
    diff = Diff.parse(git_diff({"app/core.py": (CORE, changed)}))
    units = diff.units(max_tokens=500)
    assert len(units) > 2

    kept = record(diff, unit_files={u.id: unit_files(u, diff) for u in units}).review_units()

    assert {i: u.diff.text for i, u in kept.items()} == {u.id: u.diff.text for u in units}


def test_a_run_recorded_before_its_units_were_kept_splits_its_diff_again() -> None:
    units = record(WHOLE).review_units()

    assert {i: u.diff.text for i, u in units.items()} == {u.id: u.diff.text for u in WHOLE.units()}
