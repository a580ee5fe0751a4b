"""Pairwise edge budgets and the review's hard token ceiling."""

import asyncio
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policies.budget import (
    BudgetEvent,
    BudgetEventKind,
    PairwiseBudget,
    TokenCeiling,
    edge_name,
)
from policies.errors import BudgetExhausted, CeilingReached, PolicyError, TiebreakError

EDGE = edge_name("coder", "tester")


def make_budget(limit: int = 1_000, cap: int = 4_000, growth: float = 1.5) -> PairwiseBudget:
    return PairwiseBudget(EDGE, limit=limit, cap=cap, growth=growth)


# -- edge_name ---------------------------------------------------------------------------


def test_edge_name_is_the_same_in_either_order() -> None:
    assert edge_name("tester", "coder") == edge_name("coder", "tester")
    assert edge_name("arbiter", "coder") == edge_name("coder", "arbiter")


def test_edge_names_differ_between_edges() -> None:
    assert edge_name("coder", "tester") != edge_name("arbiter", "tester")
    assert "coder" in EDGE
    assert "tester" in EDGE


# -- spending and exhaustion -------------------------------------------------------------


def test_fresh_budget_has_its_whole_limit() -> None:
    budget = make_budget(limit=1_000)

    assert budget.limit == 1_000
    assert budget.spent == 0
    assert budget.remaining == 1_000
    assert not budget.exhausted
    budget.check()


def test_spending_reduces_remaining() -> None:
    budget = make_budget(limit=1_000)

    budget.spend(300, round=1)
    assert budget.remaining == 700
    budget.spend(200, round=1)
    assert budget.spent == 500
    assert budget.remaining == 500
    budget.check()


@pytest.mark.parametrize("spent", [1_000, 1_001, 5_000])
def test_check_raises_once_spent_reaches_limit(spent: int) -> None:
    budget = make_budget(limit=1_000)
    budget.spend(spent, round=1)

    assert budget.exhausted
    assert budget.remaining == 0
    with pytest.raises(BudgetExhausted, match=EDGE) as caught:
        budget.check()
    assert caught.value.edge == EDGE
    assert caught.value.spent == spent
    assert caught.value.limit == 1_000


def test_check_passes_one_token_short_of_limit() -> None:
    budget = make_budget(limit=1_000)
    budget.spend(999, round=1)

    assert budget.remaining == 1
    budget.check()


def test_budget_exhausted_is_a_policy_error() -> None:
    budget = make_budget(limit=1_000)
    budget.spend(1_000, round=1)

    with pytest.raises(PolicyError):
        budget.check()
    assert issubclass(BudgetExhausted, TiebreakError)


# -- growth on a shrinking open diff -----------------------------------------------------


@pytest.mark.parametrize(
    ("previous", "current", "expected_limit"),
    [
        (100, 75, 1_125),  # a quarter shrink earns a quarter of the growth
        (100, 50, 1_250),
        (100, 0, 1_500),  # the whole diff closed earns the whole growth factor
    ],
)
def test_growth_is_proportional_to_the_shrink(
    previous: int, current: int, expected_limit: int
) -> None:
    budget = make_budget(limit=1_000, cap=4_000, growth=1.5)

    budget.observe_open_diff(previous, current, round=1)

    assert budget.limit == expected_limit
    assert budget.remaining == expected_limit


@pytest.mark.parametrize(
    ("smaller_shrink", "larger_shrink"),
    [((100, 90), (100, 80)), ((100, 50), (100, 10)), ((40, 39), (40, 0)), ((7, 6), (7, 5))],
)
def test_more_shrink_earns_more_growth(
    smaller_shrink: tuple[int, int], larger_shrink: tuple[int, int]
) -> None:
    small = make_budget()
    large = make_budget()

    small.observe_open_diff(*smaller_shrink, round=1)
    large.observe_open_diff(*larger_shrink, round=1)

    assert make_budget().limit < small.limit < large.limit


@pytest.mark.parametrize("cap", [1_000, 1_100, 1_499])
def test_growth_never_passes_the_cap(cap: int) -> None:
    budget = make_budget(limit=1_000, cap=cap, growth=1.5)

    for previous in (100, 50, 25, 10):
        budget.observe_open_diff(previous, 0, round=1)

    assert budget.limit == cap


def test_cap_below_initial_limit_keeps_the_initial_limit() -> None:
    budget = make_budget(limit=1_000, cap=500)

    assert budget.limit == 1_000
    budget.observe_open_diff(100, 0, round=1)
    assert budget.limit == 1_000


@given(
    limit=st.integers(min_value=1, max_value=100_000),
    extra_cap=st.integers(min_value=0, max_value=300_000),
    growth=st.floats(min_value=1.0, max_value=4.0),
    diffs=st.lists(st.integers(min_value=0, max_value=10_000), min_size=2, max_size=12),
)
def test_limit_never_shrinks_nor_passes_cap(
    limit: int, extra_cap: int, growth: float, diffs: list[int]
) -> None:
    cap = limit + extra_cap
    budget = PairwiseBudget(EDGE, limit=limit, cap=cap, growth=growth)
    for number, (previous, current) in enumerate(pairwise(diffs), start=1):
        before = budget.limit
        budget.observe_open_diff(previous, current, round=number)
        assert before <= budget.limit <= cap
        if current >= previous or previous == 0:
            assert budget.limit == before


@pytest.mark.parametrize(
    ("previous", "current"),
    [(100, 100), (100, 120), (0, 0), (0, 10), (-5, -10)],
    ids=["unchanged", "grew", "empty", "from-empty", "nonsense-negative"],
)
def test_no_growth_without_a_shrink(previous: int, current: int) -> None:
    budget = make_budget(limit=1_000)

    budget.observe_open_diff(previous, current, round=1)

    assert budget.limit == 1_000
    assert [event.kind for event in budget.history] == [BudgetEventKind.OPEN]


def test_growth_factor_of_one_never_grows() -> None:
    budget = make_budget(limit=1_000, growth=1.0)

    budget.observe_open_diff(100, 0, round=1)

    assert budget.limit == 1_000


def test_growth_revives_a_spent_but_not_dropped_edge() -> None:
    budget = make_budget(limit=1_000, growth=2.0)
    budget.spend(1_000, round=1)
    assert budget.exhausted

    budget.observe_open_diff(100, 50, round=1)

    assert budget.remaining == 500
    budget.check()


# -- dropping on repeated answers --------------------------------------------------------


def test_first_turn_never_drops() -> None:
    budget = make_budget()
    budget.spend(100, round=1)

    assert budget.observe_answers({"F1": "a", "F2": "b"}, round=1) is False
    assert budget.remaining == 900
    assert not budget.exhausted


def test_identical_answers_drop_the_budget_to_zero() -> None:
    budget = make_budget()
    budget.spend(100, round=1)
    budget.observe_answers({"F1": "a", "F2": "b"}, round=1)
    budget.spend(100, round=2)

    assert budget.observe_answers({"F1": "a", "F2": "b"}, round=2) is True

    assert budget.remaining == 0
    assert budget.exhausted
    with pytest.raises(BudgetExhausted, match=EDGE):
        budget.check()


@pytest.mark.parametrize(
    "second",
    [
        {"F1": "a", "F2": "changed"},
        {"F1": "changed", "F2": "b"},
        {"F1": "a", "F3": "new"},  # a newly answered finding is not a repetition
        {"F3": "new"},
    ],
    ids=["second-changed", "first-changed", "one-new", "only-new"],
)
def test_a_changed_answer_does_not_drop(second: dict[str, str]) -> None:
    budget = make_budget()
    budget.observe_answers({"F1": "a", "F2": "b"}, round=1)

    assert budget.observe_answers(second, round=2) is False
    assert budget.remaining == 1_000
    assert BudgetEventKind.DROP not in {event.kind for event in budget.history}


def test_repeating_a_subset_of_previous_answers_drops() -> None:
    budget = make_budget()
    budget.observe_answers({"F1": "a", "F2": "b", "F3": "c"}, round=1)

    assert budget.observe_answers({"F2": "b"}, round=2) is True
    assert budget.exhausted


def test_repetition_is_against_the_latest_answer_not_any_earlier_one() -> None:
    budget = make_budget()
    budget.observe_answers({"F1": "a"}, round=1)
    budget.observe_answers({"F1": "b"}, round=2)

    assert budget.observe_answers({"F1": "a"}, round=3) is False
    assert not budget.exhausted
    assert budget.observe_answers({"F1": "a"}, round=4) is True
    assert budget.exhausted


def test_no_answers_never_drop() -> None:
    budget = make_budget()
    budget.observe_answers({}, round=1)

    assert budget.observe_answers({}, round=2) is False
    assert not budget.exhausted


def test_growth_does_not_revive_a_dropped_budget() -> None:
    budget = make_budget(limit=1_000, cap=4_000, growth=4.0)
    budget.spend(200, round=1)
    budget.observe_answers({"F1": "a"}, round=1)
    budget.observe_answers({"F1": "a"}, round=2)
    assert budget.exhausted

    budget.observe_open_diff(100, 0, round=2)

    assert budget.exhausted
    assert budget.remaining == 0
    with pytest.raises(BudgetExhausted):
        budget.check()
    assert BudgetEventKind.GROW not in {event.kind for event in budget.history}


# -- history -----------------------------------------------------------------------------


def test_history_records_open_spend_grow_and_drop() -> None:
    budget = make_budget(limit=1_000, cap=4_000, growth=1.5)

    budget.spend(300, round=1, note="coder answer")
    budget.observe_open_diff(100, 50, round=1)
    budget.observe_answers({"F1": "a"}, round=1)
    budget.spend(200, round=2)
    budget.observe_answers({"F1": "a"}, round=2)

    assert budget.history == [
        BudgetEvent(0, BudgetEventKind.OPEN, 1_000, 0),
        BudgetEvent(1, BudgetEventKind.SPEND, 1_000, 300, "coder answer"),
        BudgetEvent(1, BudgetEventKind.GROW, 1_250, 300, "open diff 100 → 50 lines"),
        BudgetEvent(2, BudgetEventKind.SPEND, 1_250, 500),
        BudgetEvent(2, BudgetEventKind.DROP, 500, 500, "coder repeated its previous answers"),
    ]


# -- the hard ceiling --------------------------------------------------------------------


def test_fresh_ceiling_has_everything_left() -> None:
    ceiling = TokenCeiling(10_000)

    assert ceiling.remaining == 10_000
    assert ceiling.spent == 0


def test_reserve_beyond_remaining_raises() -> None:
    ceiling = TokenCeiling(10_000)

    with pytest.raises(CeilingReached) as caught:
        ceiling.reserve(10_001)
    assert caught.value.needed == 10_001
    assert caught.value.ceiling == 10_000
    assert ceiling.remaining == 10_000  # a refused reservation holds nothing


def test_reserving_exactly_the_remainder_is_allowed() -> None:
    ceiling = TokenCeiling(10_000)

    ceiling.reserve(10_000)

    assert ceiling.remaining == 0


def test_reservations_count_against_remaining_until_settled() -> None:
    ceiling = TokenCeiling(10_000)

    ceiling.reserve(4_000)
    assert ceiling.remaining == 6_000
    assert ceiling.spent == 0

    ceiling.settle(4_000, 1_500)
    assert ceiling.spent == 1_500
    assert ceiling.remaining == 8_500


def test_settle_charges_real_usage_even_above_reservation() -> None:
    ceiling = TokenCeiling(10_000)

    ceiling.reserve(1_000)
    ceiling.settle(1_000, 1_200)

    assert ceiling.spent == 1_200
    assert ceiling.remaining == 8_800


def test_concurrent_reservations_cannot_together_pass_the_ceiling() -> None:
    ceiling = TokenCeiling(10_000)

    ceiling.reserve(6_000)  # debate A, in flight
    with pytest.raises(CeilingReached):
        ceiling.reserve(6_000)  # debate B would pass the ceiling together with A
    ceiling.reserve(4_000)  # what is left is still available
    assert ceiling.remaining == 0
    with pytest.raises(CeilingReached):
        ceiling.reserve(1)

    ceiling.settle(6_000, 2_000)  # A finishes having used less than it reserved
    ceiling.reserve(4_000)
    assert ceiling.remaining == 0


def test_ceiling_reached_after_spending() -> None:
    ceiling = TokenCeiling(10_000)
    ceiling.reserve(9_000)
    ceiling.settle(9_000, 9_000)

    with pytest.raises(CeilingReached, match="the review's 10,000 billed tokens") as caught:
        ceiling.reserve(1_001)
    assert (caught.value.spent, caught.value.reserved, caught.value.needed) == (9_000, 0, 1_001)
    assert issubclass(CeilingReached, PolicyError)


async def test_a_call_waits_for_the_calls_under_way_when_their_end_leaves_it_room() -> None:
    """A unit is not turned away for what the calls under way hold at their upper estimates:
    it waits for them to settle, and is refused only if what they really used leaves no room."""
    ceiling = TokenCeiling(10_000)
    settle_first = await ceiling.take(6_000)

    second = asyncio.create_task(ceiling.take(6_000))
    await asyncio.sleep(0)
    assert not second.done()
    await settle_first(1_000)
    settle_second = await second

    assert (ceiling.spent, ceiling.remaining) == (1_000, 3_000)
    await settle_second(6_000)
    with pytest.raises(CeilingReached):
        await ceiling.take(3_001)  # nothing under way to wait for


async def test_calls_get_the_ceiling_in_the_order_they_asked() -> None:
    """A later, smaller call does not pass an earlier one waiting for room: the units asked
    first (the riskiest) are served first."""
    ceiling = TokenCeiling(10_000)
    settle_first = await ceiling.take(8_000)
    served: list[str] = []

    async def take(name: str, needed: int) -> None:
        try:
            await ceiling.take(needed)
        except CeilingReached:
            served.append(f"{name} refused")
        else:
            served.append(name)

    waiting = [asyncio.create_task(take("big", 6_000)), asyncio.create_task(take("small", 2_000))]
    await asyncio.sleep(0)
    assert served == []
    await settle_first(7_000)
    await asyncio.gather(*waiting)

    assert served == ["big refused", "small"]


async def test_a_call_no_settling_could_make_room_for_is_refused_at_once() -> None:
    ceiling = TokenCeiling(10_000)
    ceiling.reserve(5_000)
    ceiling.settle(5_000, 5_000)
    await ceiling.take(2_000)  # under way

    with pytest.raises(CeilingReached):
        await ceiling.take(5_001)


@given(
    ceiling_size=st.integers(min_value=1, max_value=100_000),
    calls=st.lists(
        st.tuples(st.integers(min_value=0, max_value=50_000), st.floats(0.0, 1.0)),
        max_size=40,
    ),
)
def test_outstanding_reservations_plus_spent_never_pass_the_ceiling(
    ceiling_size: int, calls: list[tuple[int, float]]
) -> None:
    ceiling = TokenCeiling(ceiling_size)
    outstanding: list[int] = []
    for needed, used_fraction in calls:
        try:
            ceiling.reserve(needed)
        except CeilingReached:
            # settle the oldest call in flight, using part of its reservation
            if outstanding:
                reserved = outstanding.pop(0)
                ceiling.settle(reserved, int(reserved * used_fraction))
        else:
            outstanding.append(needed)
        assert ceiling.spent + sum(outstanding) <= ceiling_size
        assert ceiling.remaining == ceiling_size - ceiling.spent - sum(outstanding)
