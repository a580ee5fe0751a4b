"""The state of one debate, and how its findings close: by vote, by ruling, or left open.

:class:`agents.debate_run.DebateRun` drives the rounds over this state. A finding closes when
the testers accept the coder's answer (`unanimous`, or `majority` on a panel), when a panel's
majority keeps it against the coder to the end (`majority`, left open), by the arbiter's
binding ruling (`arbiter`), or `unresolved` when nothing could settle it.
"""

from collections.abc import Iterable, Sequence

from agents import briefs
from agents.claims import same_finding
from agents.diff import ReviewUnit
from agents.input_checks import InputChecks
from agents.journal import Replay
from agents.llm import LLMClient, Role
from agents.outcome import (
    SYSTEM_SPEAKER,
    Consensus,
    FindingOutcome,
    Message,
    MessageKind,
    Outcome,
    Resolution,
    StopReason,
    Transcript,
)
from agents.patches import changed_lines
from agents.proofs import Proofs, Proving, told_fix
from agents.protocol import (
    Arbitrate,
    ChangeDescription,
    Finding,
    Patch,
    Ruling,
    RulingKind,
    ToolName,
    shown,
)
from agents.threads import Closure, Position, Thread
from agents.turns import Ask, TurnRunner
from policies.arbitration import ArbitrationTrigger
from policies.budget import BudgetEvent, PairwiseBudget, TokenCeiling, debate_budgets, edge_name
from policies.config import Models
from policies.debate import DebatePolicy
from policies.errors import BudgetExhausted
from policies.loops import LoopMonitor
from policies.panel import Tally, Verdict, Vote
from policies.proposals import ProposalBudget, TurnProposals
from policies.routing import Router
from policies.safety import ProtectedPaths
from policies.summary import SummaryConfig

CODER, ARBITER = "coder", "arbiter"

Batch = Sequence[tuple[Thread, ArbitrationTrigger]]


class DebateState:
    """Everything one debate over one unit knows, and the ways its findings close."""

    def __init__(
        self,
        llm: LLMClient,
        policy: DebatePolicy,
        ceiling: TokenCeiling,
        unit: ReviewUnit,
        replay: Replay | None = None,
        proving: Proving | None = None,
        models: Models | None = None,
        summary: SummaryConfig | None = None,
    ) -> None:
        self.policy = policy
        self.summary = summary
        """What the unit's walkthrough asks (`agents.describing`); None: no walkthrough."""
        self.walkthrough: ChangeDescription | None = None
        self.unit = unit
        self.diff = unit.diff
        self.panel = policy.panel()
        self.proofs = Proofs(proving)
        """What the findings' tests showed (nothing, unless a `proving` runs them)."""
        self.checks = InputChecks(unit.diff, ProtectedPaths(policy.protected_paths), self.proofs)
        shows = shown(tests=proving is not None, walkthrough=bool(summary and summary.walkthrough))
        self.turns = TurnRunner(
            llm, policy, ceiling, replay, shows=shows, models=models, unit=unit.id
        )
        self.router = Router([CODER, *self.panel.names])
        self.floor: list[str] = []
        """Every speaker the router gave the floor to, in order."""
        self.loops = LoopMonitor(policy.max_retries)
        per_turn, total = policy.max_findings_per_turn, policy.max_findings_total
        self.proposals = {
            t: ProposalBudget(per_turn=per_turn, total=total) for t in self.panel.names
        }
        self.budgets = debate_budgets(
            policy, coder=CODER, testers=self.panel.names, arbiter=ARBITER
        )
        self.edge_testers = {edge_name(CODER, t): t for t in self.panel.names}
        self.earlier_history: dict[str, list[BudgetEvent]] = {}
        """Budget histories of a restored debate's edges that this panel does not have."""
        self.present = list(self.panel.names)
        """The testers still debating: those whose budget with the coder is not spent."""
        self.views: dict[str, set[str]] = {t: set() for t in self.panel.names}
        """The open findings each tester had heard of when the round began."""
        self.threads: dict[str, Thread] = {}
        self.messages: list[Message] = []
        self.settled_unseen: list[Message] = []
        self.round = 0
        self.quiet_rounds = 0
        self.open_diff: dict[str, int] = {}
        """Each tester's open diff at the end of the last round."""
        self.dropped = 0
        self.round_progress = False
        self.stop = StopReason.SETTLED
        self.error: str | None = None

    def _edge(self, tester: str) -> PairwiseBudget:
        return self.budgets[edge_name(CODER, tester)]

    # -- closing findings ---------------------------------------------------------------

    def _accept(self, thread: Thread, tally: Tally) -> None:
        """Close a finding whose answer the testers accept: fixed by its patch, or withdrawn."""
        answer = thread.answer
        assert answer is not None
        if self.panel.is_panel:
            self._say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, f"Settled: {tally.describe()}.")
        consensus = Consensus.UNANIMOUS if tally.unanimous else Consensus.MAJORITY
        resolution = Resolution.FIXED if answer.patch is not None else Resolution.WITHDRAWN
        thread.close(Closure(consensus, resolution, self.round, patch=answer.patch))
        self.round_progress = True

    async def _settle(self, batch: Batch, *, ceiling: str | None = None) -> None:
        """End the debate on each finding of `batch`, for its trigger: by the testers' latest
        votes where they decide it, else by the arbiter (or, past the review's token
        `ceiling`, left unresolved with that reason)."""
        deadlocked = []
        for thread, trigger in batch:
            tally = thread.tally()
            if thread.answer is None:  # raised, never answered: nothing was voted on
                deadlocked.append((thread, trigger))
            elif tally.verdict is Verdict.ACCEPTED:
                self._accept(thread, tally)
            elif tally.verdict is Verdict.STANDS:
                thread.trigger = trigger
                note = f"a majority of the testers keeps it against the coder ({tally.describe()})"
                self._say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, f"Stands: {note}.")
                thread.close(Closure(Consensus.MAJORITY, Resolution.OPEN, self.round, note=note))
            else:
                deadlocked.append((thread, trigger))
        if ceiling is not None:
            for thread, trigger in deadlocked:
                self._leave_unresolved([thread], trigger, ceiling)
        else:
            await self._arbitrate(deadlocked)

    async def _arbitrate(self, batch: Batch) -> None:
        if not batch:
            return
        for thread, trigger in batch:
            thread.trigger = trigger
            if thread.loop is not None:
                self._say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, thread.loop.describe())
        threads = [t for t, _ in batch]
        if not self.policy.arbitration:
            self._leave_unresolved(threads, None, "arbitration is turned off")
            return
        ids = tuple(t.id for t in threads)
        blocks = [
            *briefs.unit_briefs(self.unit),
            briefs.arbitration_brief(
                batch,
                self.policy.protected_paths,
                panel=self.panel if self.panel.is_panel else None,
                tests=self.proofs.about_tests,
            ),
        ]
        try:
            end = await self.turns.run(
                Ask(
                    Role.ARBITER,
                    ToolName.ARBITRATE,
                    blocks,
                    edges=lambda asked: [
                        self.budgets[edge_name(ARBITER, party)]
                        for party in self._parties([t for t in threads if t.id in asked])
                    ],
                    round=self.round,
                    subject=ids,
                ),
                self.checks.rulings,
                self._ruled,
            )
        except BudgetExhausted as exc:
            unruled = [t for t in threads if t.is_open]
            self._leave_unresolved(unruled, None, f"the arbiter could not rule: {exc}")
            return
        # A forced fix is binding; its test, run with it, is on the record.
        await self._check_fixes(
            [(t, t.closure.patch) for t in threads if t.closure and t.closure.patch]
        )
        if not end.adopted:
            self._leave_unresolved(threads, None, "the arbiter's call failed")
            return
        for thread in threads:
            if not thread.is_open:
                continue
            if thread.id in end.refused:
                self._leave_unresolved([thread], None, "the arbiter's ruling on it was refused")
            else:
                self._leave_unresolved([thread], None, "the arbiter gave no ruling on it")

    async def _check_fixes(self, fixes: Sequence[tuple[Thread, Patch]]) -> None:
        """Run the test of each finding that has one failing at the head, with its patch."""
        checkable = [(t, patch) for t, patch in fixes if self.proofs.testable(t.id)]
        if not checkable:
            return
        checks = await self.proofs.check([(t.id, patch) for t, patch in checkable])
        for (thread, _), checked in zip(checkable, checks, strict=True):
            self._say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, told_fix(checked))

    def _parties(self, threads: Sequence[Thread]) -> list[str]:
        """The coder and the testers who voted on `threads`: the arbiter's edges."""
        voters = {p.tester for t in threads for p in t.positions}
        return [CODER, *(t for t in self.panel.names if t in voters)]

    def _ruled(self, result: Arbitrate) -> None:
        for ruling in result.rulings:
            self._apply(self.threads[ruling.finding_id], ruling)

    def _apply(self, thread: Thread, ruling: Ruling) -> None:
        self._say(thread, ARBITER, MessageKind.RULING, ruling.reasoning, ruling.patch)
        if ruling.ruling is RulingKind.FORCE_FIX:
            closure = Closure(Consensus.ARBITER, Resolution.FIXED, self.round, patch=ruling.patch)
            verdict = "the coder must adopt the arbiter's patch"
        else:
            closure = Closure(
                Consensus.ARBITER, Resolution.WARNING, self.round, warning=ruling.warning
            )
            warning = (ruling.warning or "").rstrip(". ")
            verdict = f"the code stands with a documented warning: {warning}"
        thread.close(closure)
        override = self._say(
            thread,
            SYSTEM_SPEAKER,
            MessageKind.OVERRIDE,
            f"Final ruling on {thread.id}: {verdict}. This ruling cannot be reopened.",
        )
        self.settled_unseen.append(override)

    def _leave_unresolved(
        self, threads: Iterable[Thread], trigger: ArbitrationTrigger | None, note: str
    ) -> None:
        for thread in threads:
            thread.trigger = thread.trigger or trigger
            self._say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, f"Unresolved: {note}.")
            thread.close(Closure(Consensus.UNRESOLVED, Resolution.OPEN, self.round, note=note))

    # -- findings -----------------------------------------------------------------------

    def _raise(
        self, findings: Sequence[Finding], tester: str, turn: TurnProposals | None = None
    ) -> int:
        """Open threads for `tester`'s new findings within its proposal budget (the allowance
        left to its `turn`, when given), most severe first; on a panel, a finding another
        tester already raised (same path, overlapping lines, the same claim) is that finding,
        now raised by both. Returns how many threads were opened."""
        ranked = sorted(findings, key=lambda f: f.severity.rank)
        fresh = []
        for finding in ranked:
            same = self._same_open_finding(finding) if self.panel.is_panel else None
            if same is None:
                fresh.append(finding)
                continue
            same.take(Position(tester, Vote.KEEP, "", self.round, raised=True))
            self._say(same, tester, MessageKind.FINDING, finding.claim)
        admitted = (turn or self.proposals[tester]).admit(len(fresh))
        if admitted < len(fresh):
            self.dropped += len(fresh) - admitted
            by = f" from {tester}" if self.panel.is_panel else ""
            self._note(
                f"{len(fresh) - admitted} findings{by} over the proposal budget were dropped"
            )
        for finding in fresh[:admitted]:
            numbered = finding.model_copy(update={"id": f"F{len(self.threads) + 1}"})
            thread = Thread(numbered, raised_by=tester)
            thread.take(Position(tester, Vote.KEEP, "", self.round, raised=True))
            self.threads[numbered.id] = thread
            self._say(thread, tester, MessageKind.FINDING, numbered.claim)
        return admitted

    def _same_open_finding(self, finding: Finding) -> Thread | None:
        return next((t for t in self._open() if same_finding(t.finding, finding)), None)

    def _open(self) -> list[Thread]:
        return [t for t in self.threads.values() if t.is_open]

    def _open_diff(self, tester: str) -> int:
        """The changed lines still disputed with `tester`: over the open findings it or a
        tester it hears has a say on, the latest patch of each, or one line."""
        hears = {tester, *self.panel.neighbours(tester)}
        return sum(
            changed_lines(t.answer.patch, self.diff) if t.answer and t.answer.patch else 1
            for t in self._open()
            if hears & t.votes().keys()
        )

    # -- the record ---------------------------------------------------------------------

    def _say(
        self,
        thread: Thread | None,
        speaker: str,
        kind: MessageKind,
        text: str,
        patch: Patch | None = None,
    ) -> Message:
        message = Message(
            round=self.round,
            speaker=speaker,
            kind=kind,
            text=text,
            finding_id=thread.id if thread else None,
            patch=patch,
        )
        self.messages.append(message)
        if thread is not None:
            thread.messages.append(message)
        return message

    def _note(self, text: str) -> None:
        self._say(None, SYSTEM_SPEAKER, MessageKind.NOTICE, text)

    def _restore(self, outcome: Outcome) -> None:
        """Pick up a finished debate: its findings as they ended, its transcript and totals."""
        self.round, self.stop, self.dropped = outcome.rounds, outcome.stop, outcome.dropped_findings
        self.walkthrough = outcome.walkthrough
        self.messages = list(outcome.transcript.messages)
        self.turns.restore(outcome)
        for result in outcome.findings:
            thread = Thread.restored(result, outcome.transcript.thread(result.finding.id))
            self.threads[thread.id] = thread
            self.proofs.restore(result)
        for name, history in outcome.budget_history.items():
            if name in self.budgets:
                self.budgets[name].history[:0] = history  # earlier events first
            else:  # the config's panel changed since
                self.earlier_history[name] = history

    def _reopen(self, finding_ids: Iterable[str]) -> list[Thread]:
        """Reopen the open findings among `finding_ids` (all of them if empty)."""
        wanted = set(finding_ids)
        chosen = [
            t for t in self.threads.values() if t.unresolved and (not wanted or t.id in wanted)
        ]
        for thread in chosen:
            thread.reopen()
        return chosen

    def _outcome(self) -> Outcome:
        tokens = self.turns.tokens_by_finding()
        history = {name: b.history for name, b in self.budgets.items()}
        return Outcome(
            unit_id=self.unit.id,
            paths=self.diff.paths,
            stop=self.stop,
            error=self.error,
            findings=[self._finding_outcome(t, tokens.get(t.id, 0)) for t in self.threads.values()],
            rounds=self.round,
            calls=len(self.turns.turns),
            failed_turns=self.turns.failed_turns,
            partial_turns=self.turns.partial_turns,
            dropped_findings=self.dropped,
            usage_by_role=self.turns.usage_by_role,
            budget_history={**self.earlier_history, **history},
            transcript=Transcript(messages=self.messages, turns=self.turns.turns),
            verification_seconds=self.proofs.seconds,
            test_tokens=self.proofs.test_tokens,
            walkthrough=self.walkthrough,
        )

    def _finding_outcome(self, thread: Thread, tokens: int) -> FindingOutcome:
        ended = thread.outcome(tokens, panel=self.panel.is_panel)
        if thread.id in self.proofs.tests:  # the latest test, which may not be the first
            ended = ended.model_copy(
                update={
                    "finding": ended.finding.model_copy(
                        update={"reproduction": self.proofs.tests[thread.id]}
                    )
                }
            )
        if thread.id not in self.proofs.results:
            return ended
        return ended.model_copy(
            update={
                "verification": self.proofs.results[thread.id],
                "fix_verified": self.proofs.fix_verified(thread.id, ended.patch),
            }
        )
