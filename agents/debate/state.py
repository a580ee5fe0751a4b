"""The state of one debate: one plain record that every step of the machine reads and writes.

The steps (`rounds`, `proving`, `arbitration`, `hearing`) each take this state; none holds
any of its own. What the debate has said is appended here (:meth:`DebateState.say`), the
findings' threads, budgets, votes and round counters are here, and the debate's outcome is
made from it (:mod:`agents.debate.ending`).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from agents.debate.briefs import unit_briefs
from agents.debate.claims import same_finding
from agents.debate.input_checks import InputChecks
from agents.debate.intent_rules import Intents
from agents.debate.proofs import Proofs, ProofTerms
from agents.debate.threads import Thread
from agents.debate.turns import Turns
from agents.diff import Diff, ReviewUnit
from agents.failures.additions import Additions
from agents.models.llm import PromptBlock
from agents.outcome import SYSTEM_SPEAKER, Message, MessageKind, StopReason
from agents.patches import changed_lines
from agents.protocol import Citation, Finding, Patch, UnitWalkthrough, shown
from agents.verification import OwnTestRun
from policies.budget import BudgetEvent, PairwiseBudget, debate_budgets, edge_name
from policies.config import Models
from policies.debate import DebatePolicy
from policies.loops import LoopMonitor
from policies.panel import Panel
from policies.proposals import ProposalBudget
from policies.routing import Router
from policies.safety import ProtectedPaths
from policies.summary import SummaryConfig

CODER, ARBITER = "coder", "arbiter"


@dataclass
class DebateState:
    """Everything one debate over one unit knows."""

    policy: DebatePolicy
    unit: ReviewUnit
    panel: Panel
    proofs: Proofs
    """What the findings' tests showed (nothing, unless tests are run)."""
    intents: Intents
    """What the coder cited to show a behaviour change intended, and what was checked of it."""
    checks: InputChecks
    turns: Turns
    router: Router
    loops: LoopMonitor
    proposals: dict[str, ProposalBudget]
    budgets: dict[str, PairwiseBudget]
    summary: SummaryConfig | None = None
    """What the unit's walkthrough asks (`agents.debate.unit_walkthrough`); None: no walkthrough."""
    walkthrough: UnitWalkthrough | None = None
    floor: list[str] = field(default_factory=list)
    """Every speaker the router gave the floor to, in order."""
    earlier_history: dict[str, list[BudgetEvent]] = field(default_factory=dict)
    """Budget histories of a restored debate's edges that this panel does not have."""
    present: list[str] = field(default_factory=list)
    """The testers still debating: those whose budget with the coder is not spent."""
    views: dict[str, set[str]] = field(default_factory=dict)
    """The open findings each tester had heard of when the round began."""
    threads: dict[str, Thread] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    settled_unseen: list[Message] = field(default_factory=list)
    """Rulings made since the coder last spoke, for its next turn."""
    round: int = 0
    quiet_rounds: int = 0
    open_diff: dict[str, int] = field(default_factory=dict)
    """Each tester's open diff at the end of the last round."""
    dropped: int = 0
    round_progress: bool = False
    stop: StopReason = StopReason.SETTLED
    error: str | None = None

    @classmethod
    def start(
        cls,
        policy: DebatePolicy,
        unit: ReviewUnit,
        *,
        terms: ProofTerms | None = None,
        models: Models | None = None,
        summary: SummaryConfig | None = None,
    ) -> "DebateState":
        """The state of a debate over `unit` before anyone has spoken."""
        panel = policy.panel()
        # What the diff adds matters to a test's failure at the base: none runs without terms.
        proofs = Proofs(terms, unit.diff.additions() if terms is not None else Additions())
        intents = Intents(unit.pull_changes, unit.intent, tests_run=terms is not None)
        walkthrough = bool(summary and summary.walkthrough)
        per_turn, total = policy.max_findings_per_turn, policy.max_findings_total
        return cls(
            policy=policy,
            unit=unit,
            panel=panel,
            proofs=proofs,
            intents=intents,
            checks=InputChecks(
                unit.diff, ProtectedPaths(policy.protected_paths), proofs, intents=intents
            ),
            turns=Turns(
                policy,
                shows=shown(tests=terms is not None, walkthrough=walkthrough),
                models=models,
                unit=unit.id,
            ),
            router=Router([CODER, *panel.names]),
            loops=LoopMonitor(policy.max_retries),
            proposals={t: ProposalBudget(per_turn=per_turn, total=total) for t in panel.names},
            budgets=debate_budgets(policy, coder=CODER, testers=panel.names, arbiter=ARBITER),
            summary=summary,
            present=list(panel.names),
            views={t: set() for t in panel.names},
        )

    @property
    def diff(self) -> Diff:
        return self.unit.diff

    @cached_property
    def briefs(self) -> tuple[PromptBlock, ...]:
        """What every call of the debate reads first (:func:`agents.debate.briefs.unit_briefs`),
        the same on each: made once."""
        return tuple(unit_briefs(self.unit))

    def edge(self, tester: str) -> PairwiseBudget:
        """The budget between the coder and `tester`."""
        return self.budgets[edge_name(CODER, tester)]

    def tester_of(self, edge: str) -> str:
        """The tester on the coder's edge named `edge`."""
        return next(t for t in self.panel.names if edge_name(CODER, t) == edge)

    def open(self) -> list[Thread]:
        return [t for t in self.threads.values() if t.is_open]

    def same_open_finding(self, finding: Finding) -> Thread | None:
        return next((t for t in self.open() if same_finding(t.finding, finding)), None)

    def disputed_lines(self, tester: str) -> int:
        """The changed lines still disputed with `tester` (its open diff): over the open
        findings it or a tester it hears has a say on, the latest patch of each, or one line."""
        hears = {tester, *self.panel.neighbours(tester)}
        return sum(
            changed_lines(t.answer.patch, self.diff) if t.answer and t.answer.patch else 1
            for t in self.open()
            if hears & t.votes().keys()
        )

    def parties(self, threads: Sequence[Thread]) -> list[str]:
        """The coder and the testers who voted on `threads`: the arbiter's edges."""
        voters = {p.tester for t in threads for p in t.positions}
        return [CODER, *(t for t in self.panel.names if t in voters)]

    def wants_walkthrough(self) -> bool:
        """Whether the unit still wants its walkthrough: the next report is asked for it."""
        return self.summary is not None and self.summary.walkthrough and self.walkthrough is None

    # -- the record ---------------------------------------------------------------------

    def say(
        self,
        thread: Thread | None,
        speaker: str,
        kind: MessageKind,
        text: str,
        patch: Patch | None = None,
        *,
        citations: Sequence[Citation] = (),
        tests: Sequence[OwnTestRun] = (),
    ) -> Message:
        """Put a message on the record, in `thread` if it is about a finding."""
        message = Message(
            round=self.round,
            speaker=speaker,
            kind=kind,
            text=text,
            finding_id=thread.id if thread else None,
            patch=patch,
            citations=list(citations),
            tests=list(tests),
        )
        self.messages.append(message)
        if thread is not None:
            thread.messages.append(message)
        return message

    def note(self, text: str) -> None:
        """A notice about the whole unit."""
        self.say(None, SYSTEM_SPEAKER, MessageKind.NOTICE, text)
