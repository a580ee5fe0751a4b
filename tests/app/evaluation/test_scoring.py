"""Scoring against tables computed by hand: tolerance edges, multi-file bugs, clean cases,
findings' tests."""

import re

import pytest

from agents.verification import Evidence
from app.evaluation.cases import Location
from app.evaluation.report import document, summaries, table
from app.evaluation.results import CaseRun, Config, Posted
from app.evaluation.scoring import MIN_FINDINGS, hits, score
from tests.kits.reviewers import case

BUG = Location(path="shop/cart.py", lines=(10, 11))


def posted(
    path: str,
    start: int,
    end: int | None = None,
    verdict: Evidence | None = None,
    *,
    intended: bool = False,
) -> Posted:
    return Posted(
        path=path, start_line=start, end_line=end or start, severity="major", claim="x",
        verdict=verdict, intended=intended,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("path", "start", "end", "tolerance", "hit"),
    [
        ("shop/cart.py", 10, 10, 3, True),
        ("shop/cart.py", 13, 14, 3, True),  # 11 + 3 = 14: widened bug reaches line 13..14
        ("shop/cart.py", 14, 14, 3, True),
        ("shop/cart.py", 15, 20, 3, False),  # one past the edge
        ("shop/cart.py", 7, 7, 3, True),  # 10 - 3 = 7
        ("shop/cart.py", 6, 6, 3, False),
        ("shop/cart.py", 1, 30, 0, True),  # a span around the bug
        ("shop/cart.py", 12, 12, 0, False),
        ("shop/cart.py", 11, 11, 0, True),
        ("shop/tax.py", 10, 10, 3, False),  # right lines, wrong file
    ],
)
def test_a_finding_hits_a_bug_within_the_tolerance(
    path: str, start: int, end: int, tolerance: int, hit: bool
) -> None:
    assert hits(posted(path, start, end), BUG, tolerance) is hit


CASES = [
    case("one", [("shop/cart.py", [10, 11])]),
    case("multi", [("shop/tax.py", [5]), ("shop/rates.py", [30])], needs_context=True),
    case("missed", [("shop/ship.py", [20])]),
    case("clean-a", paths=["shop/a.py"]),
    case("clean-b", paths=["shop/b.py"]),
]

RUNS = [
    # one: two findings, one on the bug → caught, 1 hit of 2.
    CaseRun(
        case_id="one",
        config=Config.SINGLE,
        posted=(posted("shop/cart.py", 12), posted("shop/cart.py", 30)),
        billed_tokens=1000,
        calls=1,
    ),
    # multi: hits in both files of the bug (rates 33 = 30 + 3, tax 8 = 5 + 3; tax 1 misses).
    CaseRun(
        case_id="multi",
        config=Config.SINGLE,
        posted=(posted("shop/rates.py", 33), posted("shop/tax.py", 1), posted("shop/tax.py", 8)),
        billed_tokens=2000,
        calls=1,
    ),
    # missed: one finding, off by four lines.
    CaseRun(
        case_id="missed",
        config=Config.SINGLE,
        posted=(posted("shop/ship.py", 24),),
        billed_tokens=3000,
        calls=1,
    ),
    # clean cases: three findings on one, none on the other → 1.5 false alarms a case.
    CaseRun(
        case_id="clean-a",
        config=Config.SINGLE,
        posted=(posted("shop/a.py", 1), posted("shop/a.py", 2), posted("shop/a.py", 3)),
        billed_tokens=1000,
        calls=1,
    ),
    CaseRun(case_id="clean-b", config=Config.SINGLE, billed_tokens=1000, calls=1),
    # trio failed on "missed": left out of its figures, not counted as a miss.
    CaseRun(case_id="one", config=Config.TRIO, posted=(posted("shop/cart.py", 10),)),
    CaseRun(case_id="missed", config=Config.TRIO, error="the tester could not report findings"),
    CaseRun(case_id="clean-a", config=Config.TRIO),
]


def test_hits_and_false_alarms_per_case() -> None:
    by_id = {c.id: c for c in CASES}
    table_ = {
        r.case_id: (score(by_id[r.case_id], r).hits, score(by_id[r.case_id], r).false_alarms)
        for r in RUNS
        if r.config is Config.SINGLE
    }
    assert table_ == {
        "one": (1, 0),
        "multi": (2, 0),
        "missed": (0, 0),
        "clean-a": (0, 3),
        "clean-b": (0, 0),
    }


def test_each_configuration_is_summed_up_as_computed_by_hand() -> None:
    single, trio = summaries(CASES, RUNS, tolerance=3)

    assert single.recall.value == pytest.approx(2 / 3)
    assert single.precision.value == pytest.approx(3 / 6)
    assert single.recall_by_context[True].value == 1.0
    assert single.recall_by_context[False].value == 0.5
    assert single.false_alarms_per_clean_case == 1.5
    assert single.billed_tokens_per_case == 1600
    assert (single.cases, single.failed) == (5, 0)

    assert trio.recall.value == 1.0
    assert trio.precision.value == 1.0
    assert trio.false_alarms_per_clean_case == 0.0
    assert (trio.cases, trio.failed) == (2, 1)


def test_intervals_are_deterministic_and_hold_the_figure() -> None:
    first, again = summaries(CASES, RUNS, 3)[0], summaries(CASES, RUNS, 3)[0]

    assert first.recall == again.recall
    assert first.recall.low is not None
    assert first.recall.high is not None
    assert 0.0 <= first.recall.low <= 2 / 3 <= first.recall.high <= 1.0
    assert first.precision.low is not None
    assert first.precision.high is not None
    assert first.precision.low <= 0.5 <= first.precision.high


def test_a_wider_tolerance_rescores_without_running_again() -> None:
    (single, _) = summaries(CASES, RUNS, tolerance=4)

    assert single.recall.value == 1.0  # ship.py:24 is four lines from the bug at 20


def test_the_document_and_the_table() -> None:
    doc = document(CASES, RUNS, tolerance=3)

    assert set(doc["configs"]) == {"single", "trio"}
    assert doc["configs"]["single"]["recall"] == pytest.approx(2 / 3)
    assert doc["configs"]["single"]["false_alarms_per_clean_case"] == 1.5
    assert doc["configs"]["single"]["billed_tokens_per_case"] == 1600
    assert doc["configs"]["trio"]["cases"] == 2
    failed = [c for c in doc["cases"] if c["error"]]
    assert failed == [
        {
            "id": "missed",
            "config": "trio",
            "buggy": True,
            "needs_context": False,
            "posted": [],
            "hits": 0,
            "caught": None,
            "false_alarms": 0,
            "billed_tokens": 0,
            "calls": 0,
            "seconds": 0.0,
            "error": "the tester could not report findings",
            "unverified": None,
        }
    ]
    lines = table(summaries(CASES, RUNS, 3)).splitlines()
    assert lines[0].split()[:3] == ["config", "recall", "[95%"]
    assert "tested/reproduced" not in lines[0]  # no test was run: no columns for them
    assert lines[1].startswith("single  0.67 [")
    assert lines[2].startswith("trio    1.00 [1.00-1.00]  1.00 [1.00-1.00]")


REPRODUCED, PASSES = Evidence.REPRODUCED, Evidence.NOT_REPRODUCED
TESTED_RUNS = [
    # one: reproduced 10 and 12 hit, 30 misses; 11 hits, its test passing; 40 untested misses.
    CaseRun(
        case_id="one",
        config=Config.SINGLE,
        verify=True,
        posted=(
            posted("shop/cart.py", 10, verdict=REPRODUCED),
            posted("shop/cart.py", 12, verdict=REPRODUCED),
            posted("shop/cart.py", 30, verdict=REPRODUCED),
            posted("shop/cart.py", 11, verdict=PASSES),
            posted("shop/cart.py", 40),
        ),
    ),
    # multi: reproduced tax 5 hits, tax 20 misses; three misses whose tests proved nothing.
    CaseRun(
        case_id="multi",
        config=Config.SINGLE,
        verify=True,
        posted=(
            posted("shop/tax.py", 5, verdict=REPRODUCED),
            posted("shop/tax.py", 20, verdict=REPRODUCED),
            posted("shop/tax.py", 30, verdict=Evidence.FAILS_AT_BASE),
            posted("shop/tax.py", 31, verdict=Evidence.BROKEN),
            posted("shop/tax.py", 32, verdict=Evidence.NOT_RUN),
        ),
    ),
    # clean-a: counted as tested and reproduced, never in a precision.
    CaseRun(
        case_id="clean-a",
        config=Config.SINGLE,
        verify=True,
        posted=(posted("shop/a.py", 1, verdict=REPRODUCED), posted("shop/a.py", 2)),
    ),
]


def test_reproduced_findings_are_counted_and_their_precision_set_beside_the_others() -> None:
    (single,) = summaries(CASES, TESTED_RUNS, tolerance=3)

    # Tested: a test ran (not `not_run`, not untested); 4 + 4 + 1.
    assert (single.tested, single.reproduced) == (9, 6)
    assert single.precision.value == pytest.approx(4 / 10)
    assert single.reproduced_on_buggy_cases == 5
    assert single.reproduced_precision.value == pytest.approx(3 / 5)
    assert single.other_on_buggy_cases == 5
    assert single.other_precision.value == pytest.approx(1 / 5)
    for estimate in (single.reproduced_precision, single.other_precision):
        assert estimate.low is not None
        assert estimate.high is not None
        assert estimate.value is not None
        assert 0.0 <= estimate.low <= estimate.value <= estimate.high <= 1.0
    doc = document(CASES, TESTED_RUNS, tolerance=3)["configs"]["single"]
    assert doc["reproduced_precision"] == pytest.approx(3 / 5)
    assert doc["other_precision"] == pytest.approx(1 / 5)
    assert doc["reproduced_precision_interval"] == [
        single.reproduced_precision.low,
        single.reproduced_precision.high,
    ]
    header, row = (cells(line) for line in table([single]).splitlines())
    assert header[-5:] == [
        "tested/reproduced/new code/intended",
        "precision reproduced",
        "precision new code",
        "precision intended",
        "precision other",
    ]
    low, high = single.reproduced_precision.low, single.reproduced_precision.high
    assert row[-5:-3] == ["9/6/0/0", f"0.60 [{low:.2f}-{high:.2f}]"]
    assert row[-3:-1] == ["—", "—"]  # none proven in new code, none intended


def test_findings_proven_in_new_code_are_counted_and_their_precision_set_apart() -> None:
    """Neither reproduced nor among the others: a finding whose test failed at the base only
    for the want of the code the commit adds."""
    in_new_code = Evidence.INTRODUCED
    run = CaseRun(
        case_id="one",
        config=Config.SINGLE,
        verify=True,
        posted=(
            *(posted("shop/cart.py", line, verdict=in_new_code) for line in (10, 11, 12, 13)),
            posted("shop/cart.py", 40, verdict=in_new_code),
            posted("shop/cart.py", 12, verdict=REPRODUCED),
            posted("shop/cart.py", 41),
        ),
    )

    (single,) = summaries(CASES, [run], tolerance=3)

    assert (single.tested, single.reproduced, single.introduced) == (6, 1, 5)
    assert single.introduced_on_buggy_cases == 5
    assert single.introduced_precision.value == pytest.approx(4 / 5)
    assert (single.reproduced_on_buggy_cases, single.other_on_buggy_cases) == (1, 1)
    doc = document(CASES, [run], tolerance=3)["configs"]["single"]
    assert (doc["introduced"], doc["introduced_on_buggy_cases"]) == (5, 5)
    assert doc["introduced_precision"] == pytest.approx(4 / 5)
    (row,) = table([single]).splitlines()[1:]
    low, high = single.introduced_precision.low, single.introduced_precision.high
    assert cells(row)[-5:] == ["6/1/5/0", "—", f"0.80 [{low:.2f}-{high:.2f}]", "—", "—"]


def test_intended_behaviour_changes_are_counted_apart_with_their_precision() -> None:
    """A proven change the debate found intended is posted as a behaviour change, not a
    defect: neither reproduced nor among the others, and right when it misses the bug."""
    run = CaseRun(
        case_id="one",
        config=Config.TRIO,
        verify=True,
        posted=(
            # On the labelled bug: called intended wrongly.
            posted("shop/cart.py", 12, verdict=REPRODUCED, intended=True),
            *(
                posted("shop/cart.py", line, verdict=REPRODUCED, intended=True)
                for line in (40, 41, 42)
            ),
            posted("shop/cart.py", 43, verdict=Evidence.INTRODUCED, intended=True),
            posted("shop/cart.py", 10, verdict=REPRODUCED),
        ),
    )

    (trio,) = summaries(CASES, [run], tolerance=3)

    assert (trio.tested, trio.reproduced, trio.introduced, trio.intended) == (6, 1, 0, 5)
    assert trio.intended_on_buggy_cases == 5
    assert trio.intended_precision.value == pytest.approx(4 / 5)
    assert (trio.reproduced_on_buggy_cases, trio.other_on_buggy_cases) == (1, 0)
    doc = document(CASES, [run], tolerance=3)["configs"]["trio"]
    assert (doc["intended"], doc["intended_on_buggy_cases"]) == (5, 5)
    assert doc["intended_precision"] == pytest.approx(4 / 5)
    (row,) = table([trio]).splitlines()[1:]
    low, high = trio.intended_precision.low, trio.intended_precision.high
    assert cells(row)[-5:] == ["6/1/0/5", "—", "—", f"0.80 [{low:.2f}-{high:.2f}]", "—"]


def cells(line: str) -> list[str]:
    """A table's row, cell by cell (columns are two spaces apart at least)."""
    return re.split(r"\s{2,}", line.strip())


@pytest.mark.parametrize(
    ("reproduced", "precision"),
    [
        (MIN_FINDINGS - 1, None),
        (MIN_FINDINGS, 1.0),
    ],
)
def test_too_few_reproduced_findings_give_no_precision(
    reproduced: int, precision: float | None
) -> None:
    run = CaseRun(
        case_id="one",
        config=Config.SINGLE,
        verify=True,
        posted=tuple(posted("shop/cart.py", 10, verdict=REPRODUCED) for _ in range(reproduced)),
    )

    (single,) = summaries(CASES, [run], tolerance=3)

    assert single.reproduced_precision.value == precision
    assert single.other_precision.value is None  # none posted
    (row,) = table([single]).splitlines()[1:]
    shown = "—" if precision is None else "1.00 [1.00-1.00]"
    assert cells(row)[-4:] == [shown, "—", "—", "—"]


def test_a_finding_whose_test_was_ruled_not_to_test_its_claim_counts_among_the_others() -> None:
    """Its runs reproduced, but its test was set aside: it is no proof, and is scored with
    the findings no test proved."""
    ruled_out = posted("shop/cart.py", 10, verdict=REPRODUCED).model_copy(
        update={"relevant": False}
    )
    run = CaseRun(
        case_id="one",
        config=Config.SINGLE,
        verify=True,
        posted=(ruled_out, posted("shop/cart.py", 11, verdict=REPRODUCED)),
    )

    (single,) = summaries(CASES, [run], tolerance=3)

    assert (single.tested, single.reproduced) == (2, 1)
    assert (single.reproduced_on_buggy_cases, single.other_on_buggy_cases) == (1, 1)
