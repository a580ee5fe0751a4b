"""A review's estimate before its first call: the ceiling's own figures, per unit, and how many
units, taken in order, the ceiling is expected to reach."""

import pytest

from agents.coverage import CostEstimate, UnitEstimate, estimate
from agents.debate.engine import Debate
from agents.diff import Diff
from agents.models.scripted import ScriptedLLM
from policies.debate import DebatePolicy
from tests.scenarios.coverage import LARGE_DIFF, RISKIEST_FIRST


def units_of(tokens: list[int], ceiling: int) -> CostEstimate:
    each = [
        UnitEstimate(unit=f"u{n}", files=1, first_call=t, tokens=t) for n, t in enumerate(tokens, 1)
    ]
    return CostEstimate(units=each, files=len(tokens), tokens=sum(tokens), ceiling=ceiling)


@pytest.mark.parametrize(
    ("tokens", "ceiling", "covered", "said"),
    [
        ([100, 100, 100], 300, 3, None),
        ([100, 100, 100], 299, 2, "it may cover only the first 2 units"),
        ([100, 100, 100], 150, 1, "it may cover only the first unit,"),
        ([400, 10, 10], 300, 0, "it may not cover even the first unit"),
        ([], 300, 0, None),
    ],
    ids=["all", "all-but-one", "one", "none", "no-units"],
)
def test_the_ceiling_covers_the_units_in_order_while_their_sum_fits(
    tokens: list[int], ceiling: int, covered: int, said: str | None
) -> None:
    expected = units_of(tokens, ceiling)

    assert expected.covered == covered
    line = expected.describe()
    assert f"about {sum(tokens):,} billed tokens expected against a ceiling of {ceiling:,}" in line
    if said is None:
        assert "may cover only" not in line
    else:
        assert said in line


async def test_a_units_first_call_is_estimated_as_the_ceiling_reserves_it() -> None:
    units = Diff.parse(LARGE_DIFF).units()
    llm = ScriptedLLM(lambda request: {"findings": []})

    await Debate(llm).run(units[0])

    (seed,) = llm.requests
    (first, *_) = estimate(units, DebatePolicy()).units
    # The seed adds its short instruction to what every call of the unit reads.
    assert first.first_call <= seed.estimated_tokens() <= first.first_call * 1.01


@pytest.mark.parametrize(("testers", "calls"), [(1, 5), (3, 11)])
def test_a_panel_is_expected_to_cost_more(testers: int, calls: int) -> None:
    units = Diff.parse(LARGE_DIFF).units()
    alone = estimate(units, DebatePolicy()).units[0]
    panel = estimate(units, DebatePolicy(testers=testers)).units[0]

    later = alone.tokens - alone.first_call  # four later calls of one tester's debate
    assert panel.tokens == testers * alone.first_call + (calls - testers) * later // 4


def test_the_estimate_counts_each_file_once_and_each_unit_in_order() -> None:
    expected = estimate(Diff.parse(LARGE_DIFF).units(), DebatePolicy())

    assert (expected.files, [u.unit for u in expected.units]) == (
        len(RISKIEST_FIRST),
        ["u1", "u2", "u3", "u4", "u5"],
    )
    assert expected.tokens == sum(u.tokens for u in expected.units)
