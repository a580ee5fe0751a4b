"""The rounds of one debate over one review unit: seed, answers, evaluations, votes.

:class:`agents.engine.Debate` is the way in. The state, the bookkeeping and how findings are
closed — by vote, by the arbiter, or left open — are :class:`agents.debate_state.DebateState`'s.

Each round the coder answers every open finding in one turn, then each tester evaluates the
answers to the findings it has heard of (`policies.panel`), in the router's order. Votes are
counted when the round ends: a finding the testers accept closes, one they keep goes back to
the coder, one a panel splits on goes to the arbiter with the round's other deadlocks.
"""

import functools
from collections.abc import Collection

from agents import briefs, describing
from agents.debate_proofs import ProvingSteps
from agents.debate_state import CODER
from agents.llm import Role
from agents.outcome import MessageKind, Outcome, StopReason
from agents.protocol import (
    AnswerFindings,
    Decision,
    EvaluateAnswers,
    Evaluation,
    ReportFindings,
    Stance,
    ToolName,
)
from agents.threads import Phase, Position, Thread
from agents.turns import Ask
from policies.arbitration import ArbitrationTrigger, debate_trigger, finding_trigger
from policies.budget import edge_name
from policies.errors import BudgetExhausted, OutOfTokens
from policies.loops import message_digest
from policies.panel import Verdict, Vote
from policies.proposals import TurnProposals


class DebateRun(ProvingSteps):
    """One debate over one unit, from the testers' seed to every finding's end."""

    async def run(self) -> Outcome:
        try:
            if await self._seed():
                await self._prove(list(self.threads.values()))
                await self._debate()
        except OutOfTokens as exc:
            self.stop = StopReason.CEILING
            ended = [(t, ArbitrationTrigger.CEILING) for t in self._open()]
            await self._settle(ended, ceiling=str(exc))
        return self._outcome()

    async def report(self) -> Outcome:
        """The testers' reports alone, as a one-pass reviewer gives them: every finding
        raised is left open, undebated."""
        try:
            if await self._seed():
                # Tests are run, and said, but decide nothing: there is no one to weigh them.
                await self._prove(list(self.threads.values()), retest=False)
                self._leave_unresolved(self._open(), None, "reported without a debate")
        except OutOfTokens as exc:
            self.stop = StopReason.CEILING
            self._leave_unresolved(self._open(), ArbitrationTrigger.CEILING, str(exc))
        return self._outcome()

    async def _seed(self) -> bool:
        """Every tester reports on the diff; False when the debate ends here."""
        errors: list[str] = []
        reported: set[str] = set()
        for tester in self.panel.names:
            turn = self.proposals[tester].turn()
            command = self.proofs.proving.verifier.command if self.proofs.proving else None
            blocks = [*briefs.unit_briefs(self.unit), briefs.seed_brief(turn.allowance(), command)]
            if self.summary is not None and self._undescribed():
                blocks.append(describing.brief(self.summary))
            try:
                await self.turns.run(
                    Ask(
                        Role.TESTER,
                        ToolName.REPORT_FINDINGS,
                        blocks,
                        edges=[self._edge(tester)],
                        round=0,
                        agent=tester,
                        focus=self.panel.focus(tester),
                    ),
                    self.checks.report,
                    functools.partial(self._reported, tester, turn, reported),
                )
            except (BudgetExhausted, OutOfTokens) as exc:
                if reported and isinstance(exc, OutOfTokens):
                    raise  # the findings reported so far end at the ceiling
                if tester not in reported:
                    # A unit no tester reported on was not reviewed, whatever stopped it.
                    errors.append(str(exc))
            if tester not in reported and self.panel.is_panel:
                self._note(f"{tester} could not report findings")
        if not reported:
            self.stop = StopReason.SEED_FAILED
            nobody = "no tester could" if self.panel.is_panel else "the tester could not"
            self.error = errors[0] if errors else f"{nobody} report findings"
            return False
        if not self.threads:
            self.stop = StopReason.NO_FINDINGS
            return False
        self.open_diff = {t: self._open_diff(t) for t in self.panel.names}
        return True

    def _reported(
        self, tester: str, turn: TurnProposals, reported: set[str], report: ReportFindings
    ) -> None:
        reported.add(tester)
        if report.walkthrough is not None and self.summary is not None and self._undescribed():
            self.walkthrough = describing.kept(report.walkthrough, self.unit, self.summary)
        self._raise(report.findings, tester, turn)

    def _undescribed(self) -> bool:
        """Whether the unit still wants its walkthrough: the next report is asked for it."""
        return self.summary is not None and self.summary.walkthrough and self.walkthrough is None

    async def _debate(self) -> None:
        previous: str | None = self.panel.names[-1]
        while self._open():
            speaker = self.router.next_speaker(previous)
            self.floor.append(speaker)
            previous = speaker
            if speaker == CODER:
                if self.round:
                    await self._end_round()
                    if not self._open():
                        break
                self.round += 1
                self.round_progress = False
                self._hear()
                await self._coder_turn()
            else:
                await self._tester_turn(speaker)

    def _hear(self) -> None:
        """At a round's start, which open findings each tester has heard of: those it or a
        tester it hears raised or voted on. Its turn this round evaluates answers to these."""
        for tester in self.panel.names:
            hears = {tester, *self.panel.neighbours(tester)}
            self.views[tester] = {t.id for t in self._open() if hears & t.votes().keys()}

    async def _coder_turn(self) -> None:
        pending = [t for t in self._open() if t.phase is Phase.AWAITING_ANSWER]
        if not pending:
            return
        ids = tuple(t.id for t in pending)
        for tester in self._listeners(ids):
            if self._edge(tester).exhausted:
                await self._leave(tester)
        listeners = self._listeners(ids)
        if not listeners:
            return
        blocks = [
            *briefs.unit_briefs(self.unit),
            briefs.answer_brief(
                pending,
                self.settled_unseen,
                self.policy.protected_paths,
                panel=self.panel.is_panel,
                tests=self.proofs.about_tests,
            ),
        ]
        digests: dict[str, str] = {}
        spent: str | None = None
        try:
            await self.turns.run(
                Ask(
                    Role.CODER,
                    ToolName.ANSWER_FINDINGS,
                    blocks,
                    edges=lambda asked: [self._edge(t) for t in self._listeners(asked)],
                    round=self.round,
                    subject=ids,
                ),
                self.checks.answers,
                lambda result: digests.update(self._answered(result)),
            )
        except BudgetExhausted as exc:
            spent = self.edge_testers[exc.edge]
        await self._check_concessions(pending)
        if digests or spent is None:
            self.settled_unseen.clear()  # the coder has seen them
        dropped = [
            tester
            for tester in listeners
            if self._edge(tester).observe_answers(
                {f: d for f, d in digests.items() if f in self.views[tester]}, round=self.round
            )
        ]
        if dropped:
            edges = f" with {', '.join(dropped)}" if self.panel.is_panel else ""
            self._note(f"the coder repeated its previous answers: the budget{edges} drops to zero")
        if spent is not None:
            await self._leave(spent)

    def _answered(self, result: AnswerFindings) -> dict[str, str]:
        """Take the coder's answers; return each one's message digest, by finding."""
        digests: dict[str, str] = {}
        for answer in result.answers:
            thread = self.threads[answer.finding_id]
            kind = MessageKind.CONCEDE if answer.stance is Stance.CONCEDE else MessageKind.DISPUTE
            code = answer.patch.replacement if answer.patch else None
            digest = message_digest(CODER, kind, answer.argument, code)
            digests[thread.id] = digest
            thread.answered(answer, self.round)
            self._say(thread, CODER, kind, answer.argument, answer.patch)
            home = edge_name(CODER, thread.raised_by)
            thread.loop = thread.loop or self.loops.observe(home, thread.id, CODER, digest)
        return digests

    def _listeners(self, ids: Collection[str]) -> list[str]:
        """The testers still debating who have heard of any of `ids` (all of them if none
        has): the coder's turn is charged to their edges."""
        heard = [t for t in self.present if self.views[t] & set(ids)]
        return heard or list(self.present)

    async def _tester_turn(self, tester: str) -> None:
        if tester not in self.present:
            return
        pending = [
            t
            for t in self._open()
            if t.phase is Phase.AWAITING_EVALUATION and t.id in self.views[tester]
        ]
        if not pending:
            return
        edge = self._edge(tester)
        if edge.exhausted:
            await self._leave(tester)
            return
        ids = tuple(t.id for t in pending)
        turn = self.proposals[tester].turn()
        allowance = turn.allowance()
        tests = self.proofs.about_tests
        if self.panel.is_panel:
            brief = briefs.panel_evaluation_brief(
                pending,
                self.diff,
                allowance,
                tester=tester,
                panel=self.panel,
                round=self.round,
                tests=tests,
            )
        else:
            brief = briefs.evaluation_brief(pending, self.diff, allowance, tests=tests)
        raised = set(self.threads)
        try:
            await self.turns.run(
                Ask(
                    Role.TESTER,
                    ToolName.EVALUATE_ANSWERS,
                    [*briefs.unit_briefs(self.unit), brief],
                    edges=[edge],
                    round=self.round,
                    subject=ids,
                    agent=tester,
                    focus=self.panel.focus(tester),
                ),
                self.checks.evaluations,
                functools.partial(self._evaluated, tester, turn),
            )
        except BudgetExhausted:
            await self._leave(tester)
        await self._prove([t for i, t in self.threads.items() if i not in raised])

    def _evaluated(self, tester: str, turn: TurnProposals, result: EvaluateAnswers) -> None:
        """Take `tester`'s evaluations and raise its new findings."""
        for evaluation in result.evaluations:
            self._evaluate(tester, self.threads[evaluation.finding_id], evaluation)
        if self._raise(result.new_findings, tester, turn):
            self.round_progress = True

    def _evaluate(self, tester: str, thread: Thread, evaluation: Evaluation) -> None:
        if evaluation.decision is Decision.ACCEPT:
            self._say(thread, tester, MessageKind.ACCEPT, evaluation.reason)
            thread.take(Position(tester, Vote.ACCEPT, evaluation.reason, self.round))
            return
        self._say(thread, tester, MessageKind.REJECT, evaluation.reason)
        thread.take(Position(tester, Vote.KEEP, evaluation.reason, self.round))
        digest = message_digest(tester, MessageKind.REJECT, evaluation.reason)
        edge = edge_name(CODER, tester)
        thread.loop = thread.loop or self.loops.observe(edge, thread.id, tester, digest)

    async def _leave(self, tester: str) -> None:
        """Take `tester` out of the debate: its budget with the coder is spent. Its latest
        votes stand; once no tester is left, what is open is settled now."""
        if tester in self.present:
            self.present.remove(tester)
            if self.panel.is_panel:
                self._note(f"{tester} leaves the debate: its budget with the coder is spent")
        if not self.present:
            await self._settle([(t, ArbitrationTrigger.BUDGET) for t in self._open()])

    def _count_votes(self) -> list[Thread]:
        """Count the votes on the answers evaluated this round: close what the testers accept,
        send back to the coder what they keep. Returns the findings a panel split on."""
        split = []
        for thread in self._open():
            voted = any(p.round == self.round and not p.raised for p in thread.positions)
            if thread.phase is not Phase.AWAITING_EVALUATION or not voted:
                continue
            tally = thread.tally()
            if tally.verdict is Verdict.ACCEPTED:
                self._accept(thread, tally)
                continue
            thread.phase = Phase.AWAITING_ANSWER
            thread.exchanges += 1
            if tally.verdict is Verdict.SPLIT:
                split.append(thread)
        return split

    async def _end_round(self) -> None:
        split = self._count_votes()
        if not self._open():
            return
        for tester in self.panel.names:
            current = self._open_diff(tester)
            previous = self.open_diff.get(tester, current)
            self._edge(tester).observe_open_diff(previous, current, round=self.round)
            if current < previous:
                self.round_progress = True
            self.open_diff[tester] = current
        self.quiet_rounds = 0 if self.round_progress else self.quiet_rounds + 1
        overall = debate_trigger(
            self.policy, rounds_done=self.round, quiet_rounds=self.quiet_rounds
        )
        batch = [(t, ArbitrationTrigger.TIE) for t in split]
        for thread in self._open():
            if thread in split:
                continue
            own = finding_trigger(
                self.policy, exchanges=thread.exchanges, looped=thread.loop is not None
            )
            if trigger := own or overall:
                batch.append((thread, trigger))
        await self._settle(batch)

    # -- a ruling asked for later -------------------------------------------------------

    async def arbitrate_requested(self, outcome: Outcome, finding_ids: Collection[str]) -> Outcome:
        """Pick up a finished debate and send its open findings among `finding_ids` (all of
        them if empty) to the arbiter, because a person asked."""
        self._restore(outcome)
        reopened = self._reopen(finding_ids)
        try:
            await self._arbitrate([(t, ArbitrationTrigger.REQUESTED) for t in reopened])
        except OutOfTokens as exc:
            self._leave_unresolved(self._open(), ArbitrationTrigger.CEILING, str(exc))
        return self._outcome()
