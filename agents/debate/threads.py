"""The state of one finding's thread during a debate.

A thread waits for the coder's answer, then for the testers' evaluations, and so on until it
closes: by agreement, by a panel's majority, by the arbiter's ruling, or unresolved. Every
tester's stance on it is a :class:`Position`; the latest one of each tester is its vote.
"""

from dataclasses import dataclass, field
from enum import StrEnum

from agents.outcome import Consensus, FindingOutcome, IntendedBy, Message, Resolution
from agents.protocol import Answer, Finding, Patch
from policies.arbitration import ArbitrationTrigger
from policies.loops import Loop
from policies.panel import Tally, Vote


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
    intended: IntendedBy | None = None


@dataclass(frozen=True, slots=True)
class Position:
    """A tester's stance on a finding: raising it (a keep), or evaluating the coder's answer."""

    tester: str
    vote: Vote
    reason: str
    round: int
    raised: bool = False


@dataclass
class Thread:
    finding: Finding
    raised_by: str
    phase: Phase = Phase.AWAITING_ANSWER
    answer: Answer | None = None
    """The coder's latest answer."""
    answered_in: int | None = None
    """The round of that answer."""
    positions: list[Position] = field(default_factory=list)
    """Every stance the testers took on the finding, oldest first."""
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

    def take(self, position: Position) -> None:
        self.positions.append(position)

    def votes(self) -> dict[str, Vote]:
        """Each tester's latest vote, in the order they first took a stance."""
        votes: dict[str, Vote] = {}
        for position in self.positions:
            votes[position.tester] = position.vote
        return votes

    def tally(self) -> Tally:
        return Tally.of(self.votes())

    def heard(self, tester: str, before: int) -> Position | None:
        """What `tester` said last about the finding before round `before`."""
        earlier = (p for p in reversed(self.positions) if p.tester == tester and p.round < before)
        return next(earlier, None)

    def rejections(self) -> list[Position]:
        """The testers' rejections of the coder's latest answer, one per tester."""
        if self.answered_in is None:
            return []
        latest = {
            p.tester: p
            for p in self.positions
            if p.round >= self.answered_in and not p.raised and p.vote is Vote.KEEP
        }
        return list(latest.values())

    def answered(self, answer: Answer, round: int) -> None:
        self.answer, self.answered_in, self.phase = answer, round, Phase.AWAITING_EVALUATION

    @classmethod
    def restored(cls, result: FindingOutcome, messages: list[Message]) -> "Thread":
        """The closed thread a finished debate's finding outcome describes (see `outcome`)."""
        round = result.closed_in_round
        raised = Position(result.raised_by, Vote.KEEP, "", round, raised=True)
        votes = [Position(t, vote, "", round) for t, vote in result.votes.items()]
        thread = cls(
            result.finding,
            raised_by=result.raised_by,
            positions=[raised, *votes],
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
                intended=result.intended,
            )
        )
        return thread

    @property
    def unresolved(self) -> bool:
        """Whether the thread ended open: unresolved, or kept by a panel's majority."""
        return self.closure is not None and self.closure.resolution is Resolution.OPEN

    def reopen(self) -> None:
        self.closure, self.phase = None, Phase.AWAITING_ANSWER

    def outcome(self, tokens: int, *, panel: bool) -> FindingOutcome:
        """How the finding ended; with the panel's votes when a panel debated it."""
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
            intended=closure.intended,
            trigger=self.trigger,
            note=closure.note,
            exchanges=self.exchanges,
            closed_in_round=closure.round,
            tokens=tokens,
            votes=self.votes() if panel else {},
        )
