"""What the debates count: the model calls they make, and how their findings end.

Model calls are counted as they are made, by :class:`MeteredLLM` around the worker's model
client; a call answered from a unit's journal never reaches it, so a replay is not counted
twice. A debate's findings are counted from its outcome once, when the outcome is kept (see
`app.jobs.unit`); a ruling a person asks for later is counted when it is made.
"""

from collections.abc import Iterable

from agents.models.llm import LLMClient, LLMRequest, LLMResponse, Role
from agents.outcome import FindingOutcome, Outcome
from app.telemetry.metrics import (
    ARBITRATIONS,
    BUDGET_EXHAUSTIONS,
    DEBATES,
    LLM_CALLS,
    LLM_TOKENS,
    LOOP_DETECTIONS,
    Metrics,
)
from policies.arbitration import ArbitrationTrigger
from policies.budget import BudgetEvent


class MeteredLLM:
    """A model client that counts its calls and their tokens by role."""

    def __init__(self, llm: LLMClient, metrics: Metrics) -> None:
        self.llm = llm
        self.metrics = metrics

    async def complete(self, request: LLMRequest) -> LLMResponse:
        role = str(request.role)
        try:
            response = await self.llm.complete(request)
        except Exception:
            self.metrics.inc(LLM_CALLS, role=role, outcome="error")
            raise
        self.metrics.inc(LLM_CALLS, role=role, outcome="ok")
        usage = response.usage
        for kind, tokens in (
            ("uncached", usage.input_tokens),
            ("cache_write", usage.cache_creation_input_tokens),
            ("cache_read", usage.cache_read_input_tokens),
            ("output", usage.output_tokens),
        ):
            self.metrics.inc(LLM_TOKENS, tokens, role=role, kind=kind)
        return response


def record_outcome(metrics: Metrics, outcome: Outcome) -> None:
    """Count one debate's findings by consensus, those sent to the arbiter, those caught
    looping, and the pairwise budgets that ran out."""
    for result in outcome.findings:
        metrics.inc(DEBATES, consensus=str(result.consensus))
    _count_arbitrations(metrics, arbitrated(outcome))
    looped = sum(1 for f in outcome.findings if f.trigger is ArbitrationTrigger.LOOP)
    metrics.inc(LOOP_DETECTIONS, looped)
    # An edge is exhausted when nothing is left of its budget (`PairwiseBudget.exhausted`);
    # its history's last event holds its final limit and spending.
    exhausted = sum(
        1 for history in outcome.budget_history.values() if history and _exhausted(history[-1])
    )
    metrics.inc(BUDGET_EXHAUSTIONS, exhausted)


def record_rulings(metrics: Metrics, before: Outcome, after: Outcome) -> None:
    """Count the findings a ruling asked for later sent to the arbiter: those the arbiter was
    called about since `before`."""
    _count_arbitrations(metrics, arbitrated(after, since_turn=len(before.transcript.turns)))


def arbitrated(outcome: Outcome, since_turn: int = 0) -> list[FindingOutcome]:
    """The findings the arbiter was called about (from turn `since_turn` on): every finding
    an arbiter's turn was about, whether or not its ruling settled it."""
    asked = {
        finding_id
        for turn in outcome.transcript.turns[since_turn:]
        if turn.role is Role.ARBITER
        for finding_id in turn.subject
    }
    return [f for f in outcome.findings if f.finding.id in asked]


def _count_arbitrations(metrics: Metrics, findings: Iterable[FindingOutcome]) -> None:
    for result in findings:
        metrics.inc(ARBITRATIONS, trigger=str(result.trigger or "unknown"))


def _exhausted(last: BudgetEvent) -> bool:
    return last.spent >= last.limit
