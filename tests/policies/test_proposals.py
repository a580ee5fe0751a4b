"""ProposalBudget: how many findings a tester may raise, per turn and in total."""

from hypothesis import given
from hypothesis import strategies as st

from policies.proposals import ProposalBudget


def test_fresh_budget_allows_per_turn() -> None:
    budget = ProposalBudget(per_turn=8, total=20)

    assert budget.allowance() == 8
    assert budget.remaining == 20


def test_admit_caps_at_per_turn() -> None:
    budget = ProposalBudget(per_turn=8, total=20)

    assert budget.admit(12) == 8
    assert budget.remaining == 12


def test_admit_takes_all_when_within_allowance() -> None:
    budget = ProposalBudget(per_turn=8, total=20)

    assert budget.admit(3) == 3
    assert budget.allowance() == 8
    assert budget.remaining == 17


def test_admit_caps_at_total_and_allowance_shrinks() -> None:
    budget = ProposalBudget(per_turn=8, total=20)

    assert budget.admit(8) == 8
    assert budget.admit(8) == 8
    assert budget.allowance() == 4
    assert budget.admit(8) == 4
    assert budget.allowance() == 0
    assert budget.admit(5) == 0
    assert budget.remaining == 0
    assert budget.allowance() == 0


def test_admitting_nothing_costs_nothing() -> None:
    budget = ProposalBudget(per_turn=2, total=3)

    assert budget.admit(0) == 0
    assert budget.remaining == 3


@given(
    per_turn=st.integers(min_value=1, max_value=100),
    total=st.integers(min_value=1, max_value=500),
    proposals=st.lists(st.integers(min_value=0, max_value=200), max_size=30),
)
def test_admitted_never_exceeds_per_turn_or_total(
    per_turn: int, total: int, proposals: list[int]
) -> None:
    budget = ProposalBudget(per_turn=per_turn, total=total)
    admitted_so_far = 0
    for proposed in proposals:
        before = budget.allowance()
        admitted = budget.admit(proposed)
        admitted_so_far += admitted

        assert 0 <= admitted <= min(proposed, per_turn)
        assert admitted == min(proposed, before)
        assert admitted_so_far <= total
        assert 0 <= budget.allowance() <= before
        assert budget.remaining == total - admitted_so_far >= 0
