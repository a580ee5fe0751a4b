"""DebatePolicy: the validated, frozen limits every debate obeys."""

from typing import Any

import pytest
from pydantic import ValidationError

from policies.debate import DebatePolicy
from policies.safety import ALWAYS_PROTECTED


def test_defaults_are_a_valid_policy() -> None:
    policy = DebatePolicy()

    assert policy.max_rounds >= 1
    assert policy.budget_cap >= policy.initial_budget
    assert policy.max_findings_total >= policy.max_findings_per_turn
    assert policy.arbitration is True


def test_default_protected_paths_cover_workflows_and_own_config() -> None:
    policy = DebatePolicy()

    assert ".github/workflows/**" in policy.protected_paths
    assert ".github/tiebreak.yml" in policy.protected_paths


@pytest.mark.parametrize(
    ("given", "protected"),
    [
        (["secrets/**"], (*ALWAYS_PROTECTED, "secrets/**")),
        ([], ALWAYS_PROTECTED),
        ([".github/tiebreak.yml", "*.pem"], (*ALWAYS_PROTECTED, "*.pem")),
        ([*ALWAYS_PROTECTED], ALWAYS_PROTECTED),
    ],
    ids=["one-more", "none", "repeats-one", "repeats-all"],
)
def test_configured_protected_paths_are_added_to_the_always_protected(
    given: list[str], protected: tuple[str, ...]
) -> None:
    policy = DebatePolicy.model_validate({"protected_paths": given})

    assert policy.protected_paths == protected


def test_revalidating_a_policy_keeps_its_protected_paths_once() -> None:
    policy = DebatePolicy(protected_paths=("secrets/**",))

    again = DebatePolicy.model_validate(policy.model_dump())

    assert again.protected_paths == policy.protected_paths == (*ALWAYS_PROTECTED, "secrets/**")


@pytest.mark.parametrize(
    "glob",
    ["!.github/workflows/release.yml", "  !.github/tiebreak.yml", "", "   "],
    ids=["negated", "negated-after-spaces", "empty", "blank"],
)
def test_negated_and_empty_protected_globs_are_refused(glob: str) -> None:
    with pytest.raises(ValidationError, match="protected_paths"):
        DebatePolicy.model_validate({"protected_paths": ["secrets/**", glob]})


def test_policy_is_frozen() -> None:
    policy = DebatePolicy()

    with pytest.raises(ValidationError):
        policy.max_rounds = 40  # type: ignore[misc]
    assert policy.max_rounds == DebatePolicy().max_rounds


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ValidationError, match="max_round"):
        DebatePolicy.model_validate({"max_round": 3})


def test_budget_cap_below_initial_budget_is_refused() -> None:
    with pytest.raises(ValidationError, match="budget_cap"):
        DebatePolicy(initial_budget=50_000, budget_cap=40_000)


def test_budget_cap_equal_to_initial_budget_is_accepted() -> None:
    policy = DebatePolicy(initial_budget=50_000, budget_cap=50_000)

    assert policy.budget_cap == policy.initial_budget == 50_000


def test_total_findings_below_per_turn_is_refused() -> None:
    with pytest.raises(ValidationError, match="max_findings_total"):
        DebatePolicy(max_findings_per_turn=10, max_findings_total=5)


def test_total_findings_equal_to_per_turn_is_accepted() -> None:
    policy = DebatePolicy(max_findings_per_turn=10, max_findings_total=10)

    assert policy.max_findings_total == 10


@pytest.mark.parametrize(
    "overrides",
    [
        {"max_rounds": 0},
        {"max_retries": 1},
        {"max_turn_attempts": 0},
        {"budget_growth": 0.5},
        {"token_ceiling": 1},
    ],
    ids=["no-rounds", "one-retry", "no-attempts", "shrinking-growth", "tiny-ceiling"],
)
def test_out_of_range_limits_are_refused(overrides: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        DebatePolicy.model_validate(overrides)


@pytest.mark.parametrize(
    ("max_rounds", "max_turn_attempts", "expected"),
    [
        (6, 2, 38),  # the defaults
        (1, 1, 4),
        (1, 5, 20),
        (10, 3, 93),
        (50, 5, 755),
    ],
)
def test_max_calls_bounds_seed_plus_three_turns_per_round(
    max_rounds: int, max_turn_attempts: int, expected: int
) -> None:
    policy = DebatePolicy(max_rounds=max_rounds, max_turn_attempts=max_turn_attempts)

    assert policy.max_calls() == expected
    assert policy.max_calls() == max_turn_attempts * (1 + 3 * max_rounds)


@pytest.mark.parametrize(
    ("testers", "max_rounds", "retests", "expected"),
    [
        (1, 6, 0, 2 * (1 + 3 * 6)),
        # One more turn after the seed and after each round's evaluation.
        (1, 6, 1, 2 * (1 + 3 * 6 + 7)),
        (3, 2, 2, 2 * (3 + 5 * 2 + 3 * 3 * 2)),
    ],
)
def test_findings_tests_add_a_tester_turn_per_retest_after_each_of_its_turns(
    testers: int, max_rounds: int, retests: int, expected: int
) -> None:
    policy = DebatePolicy(testers=testers, max_rounds=max_rounds)

    assert policy.max_calls(retests) == expected
