"""The state of one debate over one review unit: rounds, threads, arbitration, accounts.

:class:`agents.engine.Debate` is the way in; this is the machinery it drives.
"""

from collections.abc import Collection, Iterable, Sequence

from agents import briefs
from agents.checks import InputChecks
from agents.diff import ReviewUnit
from agents.journal import Replay
from agents.llm import LLMClient, Role
from agents.outcome import (
    SYSTEM_SPEAKER,
    Consensus,
    Message,
    MessageKind,
    Outcome,
    Resolution,
    StopReason,
    Transcript,
)
from agents.patches import changed_lines
from agents.protocol import (
    Decision,
    Evaluation,
    Finding,
    Patch,
    Ruling,
    RulingKind,
    Stance,
    ToolName,
)
from agents.threads import Closure, Phase, Thread
from agents.turns import TurnRunner
from policies.arbitration import ArbitrationTrigger, debate_trigger, finding_trigger
from policies.budget import TokenCeiling, debate_budgets, edge_name
from policies.debate import DebatePolicy
from policies.errors import BudgetExhausted, OutOfTokens
from policies.loops import LoopMonitor, message_digest
from policies.proposals import ProposalBudget
from policies.routing import Router
from policies.safety import ProtectedPaths

CODER, TESTER, ARBITER = "coder", "tester", "arbiter"


class DebateRun:
    """The state of one debate over one unit."""

    def __init__(
        self,
        llm: LLMClient,
        policy: DebatePolicy,
        ceiling: TokenCeiling,
        unit: ReviewUnit,
        replay: Replay | None = None,
    ) -> None:
        self.policy = policy
        self.unit = unit
        self.diff = unit.diff
        self.checks = InputChecks(unit.diff, ProtectedPaths(policy.protected_paths))
        self.turns = TurnRunner(llm, policy, ceiling, replay)
        self.router = Router([CODER, TESTER])
        self.loops = LoopMonitor(policy.max_retries)
        self.proposals = ProposalBudget(
            per_turn=policy.max_findings_per_turn, total=policy.max_findings_total
        )
        self.edge = edge_name(CODER, TESTER)
        self.budgets = debate_budgets(policy, coder=CODER, tester=TESTER, arbiter=ARBITER)
        self.threads: dict[str, Thread] = {}
        self.messages: list[Message] = []
        self.settled_unseen: list[Message] = []
        self.round = 0
        self.quiet_rounds = 0
        self.open_diff = 0
        self.dropped = 0
        self.round_progress = False
        self.stop = StopReason.SETTLED
        self.error: str | None = None

    # -- the debate ---------------------------------------------------------------------

    async def run(self) -> Outcome:
        try:
            if await self._seed():
                await self._debate()
        except OutOfTokens as exc:
            self.stop = StopReason.CEILING
            self._leave_unresolved(self._open(), ArbitrationTrigger.CEILING, str(exc))
        return self._outcome()

    async def _seed(self) -> bool:
        blocks = [briefs.diff_brief(self.diff), briefs.seed_brief(self.proposals.allowance())]
        edge = self.budgets[self.edge]
        try:
            report = await self.turns.run(
                Role.TESTER,
                ToolName.REPORT_FINDINGS,
                blocks,
                self.checks.report,
                edges=[edge],
                round=0,
            )
        except (BudgetExhausted, OutOfTokens) as exc:
            # A unit the tester never reported on was not reviewed, whatever stopped it.
            report, self.error = None, str(exc)
        if report is None:
            self.stop = StopReason.SEED_FAILED
            self.error = self.error or "the tester could not report findings"
            return False
        self._raise(report.findings)
        if not self.threads:
            self.stop = StopReason.NO_FINDINGS
            return False
        self.open_diff = self._open_diff()
        return True

    async def _debate(self) -> None:
        previous: str | None = TESTER
        while self._open():
            speaker = self.router.next_speaker(previous)
            previous = speaker
            if speaker == CODER:
                if self.round:
                    await self._end_round()
                    if not self._open():
                        break
                self.round += 1
                self.round_progress = False
                await self._coder_turn()
            else:
                await self._tester_turn()

    async def _coder_turn(self) -> None:
        pending = [t for t in self._open() if t.phase is Phase.AWAITING_ANSWER]
        if not pending:
            return
        ids = tuple(t.id for t in pending)
        blocks = [
            briefs.diff_brief(self.diff),
            briefs.answer_brief(pending, self.settled_unseen, self.policy.protected_paths),
        ]
        budget = self.budgets[self.edge]
        try:
            result = await self.turns.run(
                Role.CODER,
                ToolName.ANSWER_FINDINGS,
                blocks,
                lambda raw: self.checks.answers(raw, ids),
                edges=[budget],
                round=self.round,
                subject=ids,
            )
        except BudgetExhausted:
            await self._arbitrate([(t, ArbitrationTrigger.BUDGET) for t in self._open()])
            return
        self.settled_unseen.clear()
        if result is None:
            return
        fingerprints: dict[str, str] = {}
        for answer in result.answers:
            thread = self.threads[answer.finding_id]
            kind = MessageKind.CONCEDE if answer.stance is Stance.CONCEDE else MessageKind.DISPUTE
            code = answer.patch.replacement if answer.patch else None
            digest = message_digest(CODER, kind, answer.argument, code)
            fingerprints[thread.id] = digest
            thread.answer, thread.reply, thread.phase = answer, None, Phase.AWAITING_EVALUATION
            self._say(thread, CODER, kind, answer.argument, answer.patch)
            thread.loop = thread.loop or self.loops.observe(self.edge, thread.id, CODER, digest)
        if budget.observe_answers(fingerprints, round=self.round):
            self._note("the coder repeated its previous answers: the budget drops to zero")

    async def _tester_turn(self) -> None:
        pending = [t for t in self._open() if t.phase is Phase.AWAITING_EVALUATION]
        if not pending:
            return
        ids = tuple(t.id for t in pending)
        allowance = self.proposals.allowance()
        blocks = [
            briefs.diff_brief(self.diff),
            briefs.evaluation_brief(pending, self.diff, allowance),
        ]
        try:
            result = await self.turns.run(
                Role.TESTER,
                ToolName.EVALUATE_ANSWERS,
                blocks,
                lambda raw: self.checks.evaluations(raw, ids),
                edges=[self.budgets[self.edge]],
                round=self.round,
                subject=ids,
            )
        except BudgetExhausted:
            await self._arbitrate([(t, ArbitrationTrigger.BUDGET) for t in self._open()])
            return
        if result is None:
            return
        for evaluation in result.evaluations:
            self._evaluate(self.threads[evaluation.finding_id], evaluation)
        if self._raise(result.new_findings):
            self.round_progress = True

    def _evaluate(self, thread: Thread, evaluation: Evaluation) -> None:
        answer = thread.answer
        assert answer is not None
        if evaluation.decision is Decision.ACCEPT:
            self._say(thread, TESTER, MessageKind.ACCEPT, evaluation.reason)
            fixed = answer.patch is not None
            thread.close(
                Closure(
                    Consensus.UNANIMOUS,
                    Resolution.FIXED if fixed else Resolution.WITHDRAWN,
                    self.round,
                    patch=answer.patch,
                )
            )
            self.round_progress = True
            return
        self._say(thread, TESTER, MessageKind.REJECT, evaluation.reason)
        thread.reply, thread.phase = evaluation, Phase.AWAITING_ANSWER
        thread.exchanges += 1
        digest = message_digest(TESTER, MessageKind.REJECT, evaluation.reason)
        thread.loop = thread.loop or self.loops.observe(self.edge, thread.id, TESTER, digest)

    async def _end_round(self) -> None:
        current = self._open_diff()
        self.budgets[self.edge].observe_open_diff(self.open_diff, current, round=self.round)
        if current < self.open_diff:
            self.round_progress = True
        self.open_diff = current
        self.quiet_rounds = 0 if self.round_progress else self.quiet_rounds + 1
        overall = debate_trigger(
            self.policy, rounds_done=self.round, quiet_rounds=self.quiet_rounds
        )
        batch = []
        for thread in self._open():
            own = finding_trigger(
                self.policy, exchanges=thread.exchanges, looped=thread.loop is not None
            )
            if trigger := own or overall:
                batch.append((thread, trigger))
        await self._arbitrate(batch)

    # -- a ruling asked for later -------------------------------------------------------

    async def arbitrate_requested(self, outcome: Outcome, finding_ids: Collection[str]) -> Outcome:
        """Pick up a finished debate and send its unresolved findings among `finding_ids`
        (all of them if empty) to the arbiter, because a person asked."""
        self._restore(outcome)
        try:
            await self._arbitrate(
                [(t, ArbitrationTrigger.REQUESTED) for t in self._reopen(finding_ids)]
            )
        except OutOfTokens as exc:
            self._leave_unresolved(self._open(), ArbitrationTrigger.CEILING, str(exc))
        return self._outcome()

    def _restore(self, outcome: Outcome) -> None:
        """Pick up a finished debate: its findings as they ended, its transcript and totals."""
        self.round, self.stop, self.dropped = outcome.rounds, outcome.stop, outcome.dropped_findings
        self.messages = list(outcome.transcript.messages)
        self.turns.restore(outcome)
        for result in outcome.findings:
            thread = Thread.restored(result, outcome.transcript.thread(result.finding.id))
            self.threads[thread.id] = thread
        for name, history in outcome.budget_history.items():
            self.budgets[name].history[:0] = history  # earlier events first

    def _reopen(self, finding_ids: Collection[str]) -> list[Thread]:
        """Reopen the unresolved findings among `finding_ids` (all of them if empty)."""
        chosen = [
            t
            for t in self.threads.values()
            if t.unresolved and (not finding_ids or t.id in finding_ids)
        ]
        for thread in chosen:
            thread.reopen()
        return chosen

    # -- arbitration --------------------------------------------------------------------

    async def _arbitrate(self, batch: Sequence[tuple[Thread, ArbitrationTrigger]]) -> None:
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
        edges = [self.budgets[edge_name(ARBITER, CODER)], self.budgets[edge_name(ARBITER, TESTER)]]
        blocks = [
            briefs.diff_brief(self.diff),
            briefs.arbitration_brief(batch, self.policy.protected_paths),
        ]
        try:
            result = await self.turns.run(
                Role.ARBITER,
                ToolName.ARBITRATE,
                blocks,
                lambda raw: self.checks.rulings(raw, ids),
                edges=edges,
                round=self.round,
                subject=ids,
            )
        except BudgetExhausted as exc:
            self._leave_unresolved(threads, None, f"the arbiter could not rule: {exc}")
            return
        if result is None:
            self._leave_unresolved(threads, None, "the arbiter's call failed")
            return
        rulings = {r.finding_id: r for r in result.rulings}
        for thread in threads:
            ruling = rulings.get(thread.id)
            if ruling is None:
                self._leave_unresolved([thread], None, "the arbiter gave no ruling on it")
            else:
                self._apply(thread, ruling)

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

    # -- bookkeeping ------------------------------------------------------------------------

    def _raise(self, findings: Sequence[Finding]) -> int:
        """Open threads for new findings within the proposal budget, most severe first."""
        ranked = sorted(findings, key=lambda f: f.severity.rank)
        admitted = self.proposals.admit(len(ranked))
        if admitted < len(ranked):
            self.dropped += len(ranked) - admitted
            self._note(f"{len(ranked) - admitted} findings over the proposal budget were dropped")
        for finding in ranked[:admitted]:
            numbered = finding.model_copy(update={"id": f"F{len(self.threads) + 1}"})
            thread = Thread(numbered, raised_by=TESTER)
            self.threads[numbered.id] = thread
            self._say(thread, TESTER, MessageKind.FINDING, numbered.claim)
        return admitted

    def _open(self) -> list[Thread]:
        return [t for t in self.threads.values() if t.is_open]

    def _open_diff(self) -> int:
        """The changed lines still disputed: the latest patch of each open finding, or one."""
        return sum(
            changed_lines(t.answer.patch, self.diff) if t.answer and t.answer.patch else 1
            for t in self._open()
        )

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

    def _outcome(self) -> Outcome:
        tokens = self.turns.tokens_by_finding()
        return Outcome(
            unit_id=self.unit.id,
            stop=self.stop,
            error=self.error,
            findings=[t.outcome(tokens.get(t.id, 0)) for t in self.threads.values()],
            rounds=self.round,
            calls=len(self.turns.turns),
            failed_turns=self.turns.failed_turns,
            dropped_findings=self.dropped,
            usage_by_role=self.turns.usage_by_role,
            budget_history={name: b.history for name, b in self.budgets.items()},
            transcript=Transcript(messages=self.messages, turns=self.turns.turns),
        )
