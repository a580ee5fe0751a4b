"""A debate's outcome, made from its state; and a finished debate's outcome, taken back into
a state to be picked up (a ruling asked for later, a person's reply heard), with what the
record keeps of its open disputes: of a test's relevance, of a change's intent."""

from agents.debate.state import CODER, DebateState
from agents.debate.threads import Thread
from agents.outcome import FindingOutcome, Outcome, Transcript
from agents.patches import current_lines


def outcome_of(state: DebateState) -> Outcome:
    """What the debate came to, as it stands."""
    turns, proofs = state.turns, state.proofs
    tokens = turns.tokens_by_finding()
    history = {name: b.history for name, b in state.budgets.items()}
    return Outcome(
        unit_id=state.unit.id,
        paths=state.diff.paths,
        stop=state.stop,
        error=state.error,
        findings=[_finding(state, t, tokens.get(t.id, 0)) for t in state.threads.values()],
        rounds=state.round,
        calls=len(turns.turns),
        failed_turns=turns.failed_turns,
        partial_turns=turns.partial_turns,
        dropped_findings=state.dropped,
        usage_by_role=turns.usage_by_role,
        budget_history={**state.earlier_history, **history},
        transcript=Transcript(messages=state.messages, turns=turns.turns),
        verification_seconds=proofs.seconds,
        test_tokens=proofs.test_tokens,
        walkthrough=state.walkthrough,
    )


def _finding(state: DebateState, thread: Thread, tokens: int) -> FindingOutcome:
    proofs = state.proofs
    ended = thread.outcome(tokens, panel=state.panel.is_panel)
    if ended.patch is not None:  # what it replaces, for whoever applies it at a later head
        ended = ended.model_copy(update={"replaces": current_lines(state.diff, ended.patch)})
    if thread.id in proofs.tests:  # the latest test, which may not be the first
        ended = ended.model_copy(
            update={
                "finding": ended.finding.model_copy(
                    update={"reproduction": proofs.tests[thread.id]}
                )
            }
        )
    if thread.id not in proofs.results:
        return ended
    return ended.model_copy(
        update={
            "verification": proofs.results[thread.id],
            "fix_verified": proofs.fix_verified(thread.id, ended.patch),
        }
    )


def restore(state: DebateState, outcome: Outcome) -> None:
    """Pick up a finished debate: its findings as they ended, its transcript and totals."""
    state.round, state.stop, state.dropped = outcome.rounds, outcome.stop, outcome.dropped_findings
    state.walkthrough = outcome.walkthrough
    state.messages = list(outcome.transcript.messages)
    state.turns.restore(outcome)
    for result in outcome.findings:
        thread = Thread.restored(result, outcome.transcript.thread(result.finding.id))
        state.threads[thread.id] = thread
        state.proofs.restore(result)
        if thread.unresolved and result.verification and result.verification.relevant is None:
            said = [m for m in thread.messages if m.speaker == CODER]
            state.proofs.relevance.restore(thread.id, said)
    for name, history in outcome.budget_history.items():
        if name in state.budgets:
            state.budgets[name].history[:0] = history  # earlier events first
        else:  # the config's panel changed since
            state.earlier_history[name] = history


def restore_intents(state: DebateState) -> None:
    """Take a restored debate's evidence of intent back from its record, for the arbiter a
    person asks for later: the coder's intended answers on the open findings and what their
    cited tests showed. A person's reply is weighed without it: accepting the reply
    withdraws the finding, whatever the coder cited."""
    intents = state.intents
    intents.restore_runs(state.messages)
    for thread in state.threads.values():
        if thread.unresolved:
            said = [m for m in thread.messages if m.speaker == CODER]
            intents.restore(thread.finding, said)
