"""What a debate produced: every finding's fate, the transcript, and the totals.

Every finding ends with exactly one consensus type and one resolution, and the pair is
consistent (validated here): `unanimous` findings were fixed or withdrawn by agreement,
`majority` findings were fixed or withdrawn by a panel's majority or stand open because the
majority keeps them against the coder, `arbiter` findings were fixed or accepted with a
warning by a ruling, `unresolved` findings stay open. A finding whose behaviour change the
pull request shows is intended ends `intended`, by agreement or by a ruling, with the
evidence cited (:class:`IntendedBy`): a behaviour change, not a defect.
"""

from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, model_validator

from agents.models.llm import Role, Usage
from agents.protocol import Citation, Finding, Patch, ToolName, UnitWalkthrough
from agents.verification import OwnTestRun, Verification
from policies.arbitration import ArbitrationTrigger
from policies.budget import BudgetEvent
from policies.panel import Vote

SYSTEM_SPEAKER = "system"


class Consensus(StrEnum):
    UNANIMOUS = "unanimous"
    MAJORITY = "majority"
    ARBITER = "arbiter"
    UNRESOLVED = "unresolved"


class Resolution(StrEnum):
    FIXED = "fixed"
    WITHDRAWN = "withdrawn"
    WARNING = "warning"
    OPEN = "open"
    INTENDED = "intended"
    """The behaviour the finding shows changed on purpose, as the pull request shows."""


_ALLOWED: dict[Consensus, frozenset[Resolution]] = {
    Consensus.UNANIMOUS: frozenset({Resolution.FIXED, Resolution.WITHDRAWN, Resolution.INTENDED}),
    Consensus.MAJORITY: frozenset(
        {Resolution.FIXED, Resolution.WITHDRAWN, Resolution.OPEN, Resolution.INTENDED}
    ),
    Consensus.ARBITER: frozenset({Resolution.FIXED, Resolution.WARNING, Resolution.INTENDED}),
    Consensus.UNRESOLVED: frozenset({Resolution.OPEN}),
}


class MessageKind(StrEnum):
    FINDING = "finding"
    CONCEDE = "concede"
    DISPUTE = "dispute"
    INTENDED = "intended"
    """The coder's answer that the behaviour is intended, with the pull request's evidence."""
    ACCEPT = "accept"
    REJECT = "reject"
    RULING = "ruling"
    OVERRIDE = "override"
    NOTICE = "notice"
    PERSON = "person"
    """A person's reply on the finding's thread on the pull request, spoken for the code."""


class Message(BaseModel):
    """One message of the debate, about one finding (or the whole unit if `finding_id` is None)."""

    model_config = ConfigDict(frozen=True)

    round: int
    speaker: str
    kind: MessageKind
    text: str
    finding_id: str | None = None
    patch: Patch | None = None
    citations: list[Citation] = []
    """The pull request's evidence the coder cites, on its `intended` answer: what a ruling
    asked for later weighs (:mod:`agents.debate.intent_rules`)."""
    tests: list[OwnTestRun] = []
    """The cited tests of the pull request run at the head, on the notice that tells what was
    checked of the evidence."""


class Turn(BaseModel):
    """One model call: who, which tool, what it cost, and why it failed if it did.

    A call is a success (no `error`), a failure (an `error`: nothing of it was adopted), or a
    partial failure (an `error` and `partial`: its valid items were adopted, those the error
    names were refused and asked again on the turn's next attempt, about them alone).
    """

    model_config = ConfigDict(frozen=True)

    round: int
    agent: str
    role: Role
    tool: ToolName
    attempt: int
    usage: Usage
    subject: tuple[str, ...] = ()
    error: str | None = None
    partial: bool = False
    """Whether the call's valid items were adopted although `error` refused the others."""
    seconds: float = 0.0
    """How long the model took to answer (0 when unknown)."""


class Transcript(BaseModel):
    messages: list[Message] = []
    turns: list[Turn] = []

    def thread(self, finding_id: str) -> list[Message]:
        return [m for m in self.messages if m.finding_id == finding_id]


class IntendedBy(BaseModel):
    """Why a finding's behaviour change is intended: the evidence the coder cited, each
    checked to be in the pull request, and the pull request's own tests it cited, run at the
    head (none when tests are not run: then only the citations were checked)."""

    model_config = ConfigDict(frozen=True)

    citations: list[Citation]
    tests: list[OwnTestRun] = []


class FindingOutcome(BaseModel):
    """How one finding ended."""

    model_config = ConfigDict(frozen=True)

    finding: Finding
    raised_by: str
    consensus: Consensus
    resolution: Resolution
    patch: Patch | None = None
    """The agreed or forced fix, when the finding ended fixed."""
    replaces: list[str] | None = None
    """The text of the lines `patch` replaces, as the diff it was agreed on showed them:
    `/tiebreak apply` commits it only where the head still reads so. None for a finding not
    fixed, or recorded before it was kept."""
    warning: str | None = None
    """The arbiter's documented warning, when the code stands with one."""
    trigger: ArbitrationTrigger | None = None
    """Why the finding went to the arbiter (or would have), if it did."""
    note: str | None = None
    """Why a finding is left open."""
    exchanges: int = 0
    closed_in_round: int = 0
    tokens: int = 0
    """The finding's share of the tokens of the turns that were about it."""
    votes: dict[str, Vote] = {}
    """A panel's latest votes on the finding, by tester (empty with a single tester)."""
    verification: Verification | None = None
    """What the finding's test showed, run at the base and the head (when it had one and
    tests were run)."""
    fix_verified: bool | None = None
    """Whether the finding's test passes with its fix (None: not checked)."""
    intended: IntendedBy | None = None
    """The pull request's evidence that the behaviour change is intended, when it ended so."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.resolution not in _ALLOWED[self.consensus]:
            raise ValueError(f"a {self.consensus} finding cannot end {self.resolution}")
        if (self.patch is not None) != (self.resolution is Resolution.FIXED):
            raise ValueError("exactly the fixed findings carry a patch")
        if self.replaces is not None and self.patch is None:
            raise ValueError("only a finding with a patch records the lines it replaces")
        if (self.warning is not None) != (self.resolution is Resolution.WARNING):
            raise ValueError("exactly the findings accepted with a warning carry one")
        if (self.intended is not None) != (self.resolution is Resolution.INTENDED):
            raise ValueError("exactly the intended findings carry the evidence of intent")
        return self

    @property
    def behaviour_change(self) -> bool:
        """Whether the finding is a proven behaviour change the pull request means to make:
        its test proves the change, and it ended intended."""
        proven = self.verification is not None and self.verification.verdict.proof
        return proven and self.resolution is Resolution.INTENDED


class StopReason(StrEnum):
    NO_FINDINGS = "no_findings"
    SETTLED = "settled"
    SEED_FAILED = "seed_failed"
    CEILING = "ceiling"
    FAILED = "failed"
    """The unit's debate never finished: every attempt at it failed or died."""


class Outcome(BaseModel):
    """The result of one debate over one review unit."""

    unit_id: str
    stop: StopReason
    findings: list[FindingOutcome]
    rounds: int
    calls: int
    failed_turns: int
    """The turns that adopted nothing: every attempt failed."""
    dropped_findings: int
    usage_by_role: dict[Role, Usage]
    budget_history: dict[str, list[BudgetEvent]]
    transcript: Transcript
    error: str | None = None
    partial_turns: int = 0
    """The turns that adopted part of their input and still had items refused when their
    attempts ran out (the refused items wait for the next turn, as unanswered ones do)."""
    verification_seconds: float = 0.0
    """Seconds the findings' tests ran (each test's runs at the base and the head counted
    once, as they run at once)."""
    test_tokens: int = 0
    """About how many of the testers' output tokens went into writing tests."""
    paths: tuple[str, ...] = ()
    """The files of the unit's diff (a file cut at hunk boundaries may be in several units)."""
    carried_from: str | None = None
    """The commit whose review debated this unit, when a later review carries its findings
    forward unchanged (its code did not change); its counts are then the earlier review's."""
    walkthrough: UnitWalkthrough | None = None
    """The unit's walkthrough (`agents.debate.unit_walkthrough`), for the summary's, when the
    config asked for one and a tester's report gave it."""

    @property
    def usage(self) -> Usage:
        return sum(self.usage_by_role.values(), Usage())

    @property
    def billed(self) -> int:
        """The unit's billed tokens as the ceiling counts them: each call's, added up (a
        cache token's price is rounded per call, so the billed figure of the summed usage can
        be a little lower)."""
        return sum(self.billed_by_role().values())

    def billed_by_role(self) -> dict[Role, int]:
        if not self.transcript.turns:  # an outcome kept without its calls: its usage is all
            return {role: usage.billed for role, usage in self.usage_by_role.items()}
        totals: dict[Role, int] = {}
        for turn in self.transcript.turns:
            totals[turn.role] = totals.get(turn.role, 0) + turn.usage.billed
        return totals

    @property
    def unresolved(self) -> list[FindingOutcome]:
        """The findings left open: unresolved, or kept by a panel's majority against the
        coder. A person may still send them to the arbiter."""
        return [f for f in self.findings if f.resolution is Resolution.OPEN]

    @classmethod
    def failed(cls, unit_id: str, error: str, paths: tuple[str, ...] = ()) -> "Outcome":
        """The outcome of a unit whose debate never finished."""
        return cls(
            unit_id=unit_id,
            stop=StopReason.FAILED,
            findings=[],
            rounds=0,
            calls=0,
            failed_turns=0,
            dropped_findings=0,
            usage_by_role={},
            budget_history={},
            transcript=Transcript(),
            error=error,
            paths=paths,
        )
