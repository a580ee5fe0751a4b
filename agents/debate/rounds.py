"""The rounds of one debate over one review unit: seed, answers, evaluations, votes.

Each round the coder answers every open finding in one turn, then each tester evaluates the
answers to the findings it has heard of (`policies.panel`), in the router's order. Votes are
counted when the round ends: a finding the testers accept closes, one they keep goes back to
the coder, one a panel splits on goes to the arbiter with the round's other deadlocks.
"""

import functools
from collections.abc import Collection

from agents.debate import briefs, relevance, unit_walkthrough
from agents.debate.arbitration import Arbitration
from agents.debate.findings import accept, leave_unresolved, raise_findings, reopen
from agents.debate.intending import IntentSteps
from agents.debate.needs import Steps
from agents.debate.proving import ProofSteps
from agents.debate.state import CODER, DebateState
from agents.debate.threads import Phase, Position, Thread
from agents.debate.turns import Ask
from agents.models.llm import Role
from agents.outcome import MessageKind, StopReason
from agents.protocol import (
    AnswerFindings,
    Decision,
    EvaluateAnswers,
    Evaluation,
    ReportFindings,
    Stance,
    ToolName,
)
from policies.arbitration import ArbitrationTrigger, debate_trigger, finding_trigger
from policies.budget import edge_name
from policies.errors import BudgetExhausted, OutOfTokens
from policies.loops import message_digest
from policies.panel import PanelVerdict, Vote
from policies.proposals import TurnProposals

ANSWERED = {
    Stance.CONCEDE: MessageKind.CONCEDE,
    Stance.DISPUTE: MessageKind.DISPUTE,
    Stance.IRRELEVANT_TEST: MessageKind.DISPUTE,
    Stance.INTENDED: MessageKind.INTENDED,
}
"""The message each stance of the coder's is put on the record as."""


class Rounds:
    """One debate over one unit, from the testers' seed to every finding's end."""

    def __init__(self, state: DebateState, proving: ProofSteps, arbitration: Arbitration) -> None:
        self.state = state
        self.proving = proving
        self.arbitration = arbitration
        self.intending = IntentSteps(state)

    def run(self) -> Steps[None]:
        state = self.state
        try:
            if (yield from self._seed()):
                yield from self.proving.prove(list(state.threads.values()))
                yield from self._debate()
        except OutOfTokens as exc:
            state.stop = StopReason.CEILING
            ended = [(t, ArbitrationTrigger.CEILING) for t in state.open()]
            yield from self.arbitration.settle(ended, ceiling=str(exc))

    def report(self) -> Steps[None]:
        """The testers' reports alone, as a one-pass reviewer gives them: every finding
        raised is left open, undebated."""
        state = self.state
        try:
            if (yield from self._seed()):
                # Tests are run, and said, but decide nothing: there is no one to weigh them.
                yield from self.proving.prove(list(state.threads.values()), retest=False)
                leave_unresolved(state, state.open(), None, "reported without a debate")
        except OutOfTokens as exc:
            state.stop = StopReason.CEILING
            leave_unresolved(state, state.open(), ArbitrationTrigger.CEILING, str(exc))

    def arbitrate_requested(self, finding_ids: Collection[str]) -> Steps[None]:
        """Send a finished debate's open findings among `finding_ids` (all of them if empty)
        to the arbiter, because a person asked."""
        state = self.state
        reopened = reopen(state, finding_ids)
        try:
            yield from self.arbitration.arbitrate(
                [(t, ArbitrationTrigger.REQUESTED) for t in reopened]
            )
        except OutOfTokens as exc:
            leave_unresolved(state, state.open(), ArbitrationTrigger.CEILING, str(exc))

    # -- the seed -----------------------------------------------------------------------

    def _seed(self) -> Steps[bool]:
        """Every tester reports on the diff; False when the debate ends here."""
        state = self.state
        errors: list[str] = []
        reported: set[str] = set()
        for tester in state.panel.names:
            turn = state.proposals[tester].turn()
            try:
                yield from state.turns.run(
                    self._report_ask(tester, turn),
                    state.checks.report,
                    functools.partial(self._reported, tester, turn, reported),
                )
            except (BudgetExhausted, OutOfTokens) as exc:
                if reported and isinstance(exc, OutOfTokens):
                    raise  # the findings reported so far end at the ceiling
                if tester not in reported:
                    # A unit no tester reported on was not reviewed, whatever stopped it.
                    errors.append(str(exc))
            if tester not in reported and state.panel.is_panel:
                state.note(f"{tester} could not report findings")
        if not reported:
            state.stop = StopReason.SEED_FAILED
            nobody = "no tester could" if state.panel.is_panel else "the tester could not"
            state.error = errors[0] if errors else f"{nobody} report findings"
            return False
        if not state.threads:
            state.stop = StopReason.NO_FINDINGS
            return False
        state.open_diff = {t: state.disputed_lines(t) for t in state.panel.names}
        return True

    def _report_ask(self, tester: str, turn: TurnProposals) -> Ask:
        state = self.state
        terms = state.proofs.terms
        blocks = [
            *state.briefs,
            briefs.seed_brief(turn.allowance(), terms.command if terms else None),
        ]
        if state.summary is not None and state.wants_walkthrough():
            blocks.append(unit_walkthrough.brief(state.summary))
        return Ask(
            Role.TESTER,
            ToolName.REPORT_FINDINGS,
            blocks,
            edges=[state.edge(tester)],
            round=0,
            agent=tester,
            focus=state.panel.focus(tester),
        )

    def _reported(
        self, tester: str, turn: TurnProposals, reported: set[str], report: ReportFindings
    ) -> None:
        state = self.state
        reported.add(tester)
        if (
            report.walkthrough is not None
            and state.summary is not None
            and state.wants_walkthrough()
        ):
            state.walkthrough = unit_walkthrough.kept(report.walkthrough, state.unit, state.summary)
        raise_findings(state, report.findings, tester, turn)

    # -- the rounds ---------------------------------------------------------------------

    def _debate(self) -> Steps[None]:
        state = self.state
        previous: str | None = state.panel.names[-1]
        while state.open():
            speaker = state.router.next_speaker(previous)
            state.floor.append(speaker)
            previous = speaker
            if speaker == CODER:
                if state.round:
                    yield from self._end_round()
                    if not state.open():
                        break
                state.round += 1
                state.round_progress = False
                self._hear()
                yield from self._coder_turn()
            else:
                yield from self._tester_turn(speaker)

    def _hear(self) -> None:
        """At a round's start, which open findings each tester has heard of: those it or a
        tester it hears raised or voted on. Its turn this round evaluates answers to these."""
        state = self.state
        for tester in state.panel.names:
            hears = {tester, *state.panel.neighbours(tester)}
            state.views[tester] = {t.id for t in state.open() if hears & t.votes().keys()}

    def _coder_turn(self) -> Steps[None]:
        state = self.state
        pending = [t for t in state.open() if t.phase is Phase.AWAITING_ANSWER]
        if not pending:
            return
        ids = tuple(t.id for t in pending)
        for tester in self._listeners(ids):
            if state.edge(tester).exhausted:
                yield from self._leave(tester)
        listeners = self._listeners(ids)
        if not listeners:
            return
        digests: dict[str, str] = {}
        spent: str | None = None
        try:
            yield from state.turns.run(
                self._answer_ask(pending),
                state.checks.answers,
                lambda result: digests.update(self._answered(result)),
            )
        except BudgetExhausted as exc:
            spent = state.tester_of(exc.edge)
        yield from self.proving.check_concessions(pending)
        yield from self.intending.check(pending)
        if digests or spent is None:
            state.settled_unseen.clear()  # the coder has seen them
        dropped = [
            tester
            for tester in listeners
            if state.edge(tester).observe_answers(
                {f: d for f, d in digests.items() if f in state.views[tester]}, round=state.round
            )
        ]
        if dropped:
            edges = f" with {', '.join(dropped)}" if state.panel.is_panel else ""
            state.note(f"the coder repeated its previous answers: the budget{edges} drops to zero")
        if spent is not None:
            yield from self._leave(spent)

    def _answer_ask(self, pending: list[Thread]) -> Ask:
        state = self.state
        blocks = [
            *state.briefs,
            briefs.answer_brief(
                pending,
                state.settled_unseen,
                state.policy.protected_paths,
                panel=state.panel.is_panel,
                tests=state.proofs.about_tests,
            ),
        ]
        return Ask(
            Role.CODER,
            ToolName.ANSWER_FINDINGS,
            blocks,
            edges=lambda asked: [state.edge(t) for t in self._listeners(asked)],
            round=state.round,
            subject=tuple(t.id for t in pending),
        )

    def _answered(self, result: AnswerFindings) -> dict[str, str]:
        """Take the coder's answers; return each one's message digest, by finding."""
        state = self.state
        digests: dict[str, str] = {}
        for answer in result.answers:
            thread = state.threads[answer.finding_id]
            kind = ANSWERED[answer.stance]
            code = answer.patch.replacement if answer.patch else None
            digest = message_digest(CODER, kind, answer.argument, code)
            digests[thread.id] = digest
            thread.answered(answer, state.round)
            state.proofs.relevance.answered(answer)
            state.intents.take(answer)
            cited = answer.citations if answer.stance is Stance.INTENDED else []
            state.say(thread, CODER, kind, relevance.said(answer), answer.patch, citations=cited)
            home = edge_name(CODER, thread.raised_by)
            thread.loop = thread.loop or state.loops.observe(home, thread.id, CODER, digest)
        return digests

    def _listeners(self, ids: Collection[str]) -> list[str]:
        """The testers still debating who have heard of any of `ids` (all of them if none
        has): the coder's turn is charged to their edges."""
        state = self.state
        heard = [t for t in state.present if state.views[t] & set(ids)]
        return heard or list(state.present)

    def _tester_turn(self, tester: str) -> Steps[None]:
        state = self.state
        if tester not in state.present:
            return
        pending = [
            t
            for t in state.open()
            if t.phase is Phase.AWAITING_EVALUATION and t.id in state.views[tester]
        ]
        if not pending:
            return
        if state.edge(tester).exhausted:
            yield from self._leave(tester)
            return
        turn = state.proposals[tester].turn()
        raised = set(state.threads)
        try:
            yield from state.turns.run(
                self._evaluation_ask(tester, pending, turn.allowance()),
                state.checks.evaluations,
                functools.partial(self._evaluated, tester, turn),
            )
        except BudgetExhausted:
            yield from self._leave(tester)
        yield from self.proving.prove([t for i, t in state.threads.items() if i not in raised])
        yield from self.proving.prove_given()

    def _evaluation_ask(self, tester: str, pending: list[Thread], allowance: int) -> Ask:
        state = self.state
        tests = state.proofs.about_tests
        if state.panel.is_panel:
            brief = briefs.panel_evaluation_brief(
                pending,
                state.diff,
                allowance,
                tester=tester,
                panel=state.panel,
                round=state.round,
                tests=tests,
            )
        else:
            brief = briefs.evaluation_brief(pending, state.diff, allowance, tests=tests)
        return Ask(
            Role.TESTER,
            ToolName.EVALUATE_ANSWERS,
            [*state.briefs, brief],
            edges=[state.edge(tester)],
            round=state.round,
            subject=tuple(t.id for t in pending),
            agent=tester,
            focus=state.panel.focus(tester),
        )

    def _evaluated(self, tester: str, turn: TurnProposals, result: EvaluateAnswers) -> None:
        """Take `tester`'s evaluations and raise its new findings."""
        state = self.state
        for evaluation in result.evaluations:
            self._evaluate(tester, state.threads[evaluation.finding_id], evaluation)
        if raise_findings(state, result.new_findings, tester, turn):
            state.round_progress = True

    def _evaluate(self, tester: str, thread: Thread, evaluation: Evaluation) -> None:
        state = self.state
        if evaluation.decision is Decision.ACCEPT:
            state.say(thread, tester, MessageKind.ACCEPT, evaluation.reason)
            thread.take(Position(tester, Vote.ACCEPT, evaluation.reason, state.round))
            return
        state.say(thread, tester, MessageKind.REJECT, evaluation.reason)
        thread.take(Position(tester, Vote.KEEP, evaluation.reason, state.round))
        if evaluation.reproduction is not None:  # in answer to a dispute of its test
            state.proofs.relevance.give(thread.id, evaluation.reproduction)
        digest = message_digest(tester, MessageKind.REJECT, evaluation.reason)
        edge = edge_name(CODER, tester)
        thread.loop = thread.loop or state.loops.observe(edge, thread.id, tester, digest)

    def _leave(self, tester: str) -> Steps[None]:
        """Take `tester` out of the debate: its budget with the coder is spent. Its latest
        votes stand; once no tester is left, what is open is settled now."""
        state = self.state
        if tester in state.present:
            state.present.remove(tester)
            if state.panel.is_panel:
                state.note(f"{tester} leaves the debate: its budget with the coder is spent")
        if not state.present:
            yield from self.arbitration.settle(
                [(t, ArbitrationTrigger.BUDGET) for t in state.open()]
            )

    # -- the end of a round -------------------------------------------------------------

    def _count_votes(self) -> list[Thread]:
        """Count the votes on the answers evaluated this round: close what the testers accept,
        send back to the coder what they keep. Returns the findings a panel split on."""
        state = self.state
        split = []
        for thread in state.open():
            voted = any(p.round == state.round and not p.raised for p in thread.positions)
            if thread.phase is not Phase.AWAITING_EVALUATION or not voted:
                continue
            tally = thread.tally()
            if tally.verdict is PanelVerdict.ACCEPTED:
                accept(state, thread, tally)
                continue
            thread.phase = Phase.AWAITING_ANSWER
            thread.exchanges += 1
            if tally.verdict is PanelVerdict.SPLIT:
                split.append(thread)
        return split

    def _end_round(self) -> Steps[None]:
        state = self.state
        split = self._count_votes()
        if not state.open():
            return
        for tester in state.panel.names:
            current = state.disputed_lines(tester)
            previous = state.open_diff.get(tester, current)
            state.edge(tester).observe_open_diff(previous, current, round=state.round)
            if current < previous:
                state.round_progress = True
            state.open_diff[tester] = current
        state.quiet_rounds = 0 if state.round_progress else state.quiet_rounds + 1
        overall = debate_trigger(
            state.policy, rounds_done=state.round, quiet_rounds=state.quiet_rounds
        )
        batch = [(t, ArbitrationTrigger.TIE) for t in split]
        for thread in state.open():
            if thread in split:
                continue
            own = finding_trigger(
                state.policy, exchanges=thread.exchanges, looped=thread.loop is not None
            )
            if trigger := own or overall:
                batch.append((thread, trigger))
        yield from self.arbitration.settle(batch)
