"""When a finding, or a whole debate, goes to the arbiter."""

import pytest

from policies.arbitration import ArbitrationTrigger, debate_trigger, finding_trigger
from policies.debate import DebatePolicy

POLICY = DebatePolicy(max_exchanges_per_finding=3, max_rounds=6, convergence_threshold=2)


@pytest.mark.parametrize(
    ("exchanges", "looped", "expected"),
    [
        (0, False, None),
        (2, False, None),
        (3, False, ArbitrationTrigger.EXCHANGE_LIMIT),
        (7, False, ArbitrationTrigger.EXCHANGE_LIMIT),
        (0, True, ArbitrationTrigger.LOOP),
        (2, True, ArbitrationTrigger.LOOP),
        (3, True, ArbitrationTrigger.LOOP),  # a loop is reported as such, even at the limit
    ],
)
def test_finding_trigger(exchanges: int, looped: bool, expected: ArbitrationTrigger | None) -> None:
    assert finding_trigger(POLICY, exchanges=exchanges, looped=looped) is expected


@pytest.mark.parametrize(
    ("rounds_done", "quiet_rounds", "expected"),
    [
        (0, 0, None),
        (1, 1, None),
        (5, 1, None),
        (2, 2, ArbitrationTrigger.CONVERGED),
        (3, 5, ArbitrationTrigger.CONVERGED),
        (6, 0, ArbitrationTrigger.ROUND_LIMIT),
        (9, 0, ArbitrationTrigger.ROUND_LIMIT),
        (6, 2, ArbitrationTrigger.ROUND_LIMIT),  # the round limit wins over convergence
    ],
)
def test_debate_trigger(
    rounds_done: int, quiet_rounds: int, expected: ArbitrationTrigger | None
) -> None:
    assert debate_trigger(POLICY, rounds_done=rounds_done, quiet_rounds=quiet_rounds) is expected


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_exchange_limit_follows_the_policy(limit: int) -> None:
    policy = DebatePolicy(max_exchanges_per_finding=limit)

    assert finding_trigger(policy, exchanges=limit - 1, looped=False) is None
    assert (
        finding_trigger(policy, exchanges=limit, looped=False) is ArbitrationTrigger.EXCHANGE_LIMIT
    )


@pytest.mark.parametrize("threshold", [1, 3])
def test_convergence_threshold_follows_the_policy(threshold: int) -> None:
    policy = DebatePolicy(convergence_threshold=threshold, max_rounds=50)

    assert debate_trigger(policy, rounds_done=1, quiet_rounds=threshold - 1) is None
    assert (
        debate_trigger(policy, rounds_done=1, quiet_rounds=threshold)
        is ArbitrationTrigger.CONVERGED
    )
