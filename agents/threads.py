"""The state of one finding's thread during a debate.

A thread waits for the coder's answer, then for the tester's evaluation, and so on until it
closes: by agreement, by the arbiter's ruling, or unresolved.
"""

from dataclasses import dataclass, field
from enum import StrEnum

from agents.outcome import Consensus, FindingOutcome, Message, Resolution
from agents.protocol import Answer, Evaluation, Finding, Patch
from policies.arbitration import ArbitrationTrigger
from policies.loops import Loop


class Phase(StrEnum):
    AWAITING_ANSWER = "awaiting_answer"
    AWAITING_EVALUATION = "awaiting_evaluation"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Closure:
    consensus: Consensus
    resolution: Resolution
    round: int
    patch: Patch | None = None
    warning: str | None = None
    note: str | None = None


@dataclass
class Thread:
    finding: Finding
    raised_by: str
    phase: Phase = Phase.AWAITING_ANSWER
    answer: Answer | None = None
    """The coder's latest answer."""
    reply: Evaluation | None = None
    """The tester's latest rejection of that answer."""
    exchanges: int = 0
    loop: Loop | None = None
    trigger: ArbitrationTrigger | None = None
    closure: Closure | None = None
    messages: list[Message] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.finding.id

    @property
    def is_open(self) -> bool:
        return self.phase is not Phase.CLOSED

    def close(self, closure: Closure) -> None:
        self.closure = closure
        self.phase = Phase.CLOSED

    @classmethod
    def restored(cls, result: FindingOutcome, messages: list[Message]) -> "Thread":
        """The closed thread a finished debate's finding outcome describes (see `outcome`)."""
        thread = cls(
            result.finding,
            raised_by=result.raised_by,
            exchanges=result.exchanges,
            trigger=result.trigger,
            messages=messages,
        )
        thread.close(
            Closure(
                result.consensus,
                result.resolution,
                result.closed_in_round,
                patch=result.patch,
                warning=result.warning,
                note=result.note,
            )
        )
        return thread

    @property
    def unresolved(self) -> bool:
        return self.closure is not None and self.closure.consensus is Consensus.UNRESOLVED

    def reopen(self) -> None:
        self.closure, self.phase = None, Phase.AWAITING_ANSWER

    def outcome(self, tokens: int) -> FindingOutcome:
        closure = self.closure
        if closure is None:
            raise RuntimeError(f"thread {self.id} is still open")
        return FindingOutcome(
            finding=self.finding,
            raised_by=self.raised_by,
            consensus=closure.consensus,
            resolution=closure.resolution,
            patch=closure.patch,
            warning=closure.warning,
            trigger=self.trigger,
            note=closure.note,
            exchanges=self.exchanges,
            closed_in_round=closure.round,
            tokens=tokens,
        )
