"""When a dispute goes to the arbiter, and what the arbiter is shown.

A finding goes to the arbiter when its thread loops, when its edge's budget is spent, when it
has been rejected `max_exchanges_per_finding` times, when the debate converged without
settling it, or when the round limit is reached — unless a panel's majority of two or more
testers keeps it, in which case it stands (`policies.panel`); a panel that splits evenly
sends it to the arbiter at once. The ruling is binding. A finding the arbiter cannot settle —
arbitration off, its budget spent, its call failed, its ruling invalid — stays open and ends
`unresolved`.
"""

from enum import StrEnum

from policies.debate import DebatePolicy

CONTEXT_MESSAGES = 4
"""How many of the latest messages about a finding the arbiter reads."""


class ArbitrationTrigger(StrEnum):
    LOOP = "loop"
    BUDGET = "budget"
    EXCHANGE_LIMIT = "exchange_limit"
    CONVERGED = "converged"
    ROUND_LIMIT = "round_limit"
    CEILING = "ceiling"
    REQUESTED = "requested"
    """A person asked for a ruling (`/tiebreak arbitrate`)."""
    TIE = "tie"
    """A panel of testers split evenly on the coder's answer."""


def finding_trigger(
    policy: DebatePolicy, *, exchanges: int, looped: bool
) -> ArbitrationTrigger | None:
    """Whether one finding's own thread calls for arbitration."""
    if looped:
        return ArbitrationTrigger.LOOP
    if exchanges >= policy.max_exchanges_per_finding:
        return ArbitrationTrigger.EXCHANGE_LIMIT
    return None


def debate_trigger(
    policy: DebatePolicy, *, rounds_done: int, quiet_rounds: int
) -> ArbitrationTrigger | None:
    """Whether the whole debate must hand its open findings to the arbiter."""
    if rounds_done >= policy.max_rounds:
        return ArbitrationTrigger.ROUND_LIMIT
    if quiet_rounds >= policy.convergence_threshold:
        return ArbitrationTrigger.CONVERGED
    return None
