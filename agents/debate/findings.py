"""How findings open and close on a debate's state, none of it asking anyone anything.

A finding opens when a tester raises it, within its proposal budget; on a panel, a finding
another tester raised already is that finding, raised by both. It closes when the testers
accept the coder's answer (`unanimous`, or `majority` on a panel), when a panel's majority
keeps it against the coder to the end (`majority`, left open), by the arbiter's binding
ruling (`arbiter`), when its test passes at the head and no other test is given (withdrawn),
or `unresolved` when nothing could settle it.
"""

from collections.abc import Iterable, Sequence

from agents.debate.relevance import RELEVANCE_RULINGS, forces_fix, told_set_aside
from agents.debate.state import ARBITER, DebateState
from agents.debate.threads import Closure, Position, Thread
from agents.outcome import SYSTEM_SPEAKER, Consensus, MessageKind, Resolution
from agents.protocol import Finding, Ruling, RulingKind, Stance
from policies.arbitration import ArbitrationTrigger
from policies.panel import Tally, Vote
from policies.proposals import TurnProposals


def raise_findings(
    state: DebateState,
    findings: Sequence[Finding],
    tester: str,
    turn: TurnProposals | None = None,
) -> int:
    """Open threads for `tester`'s new findings within its proposal budget (the allowance
    left to its `turn`, when given), most severe first; on a panel, a finding another tester
    already raised (same path, overlapping lines, the same claim) is that finding, now raised
    by both. Returns how many threads were opened."""
    ranked = sorted(findings, key=lambda f: f.severity.rank)
    fresh = []
    for finding in ranked:
        same = state.same_open_finding(finding) if state.panel.is_panel else None
        if same is None:
            fresh.append(finding)
            continue
        same.take(Position(tester, Vote.KEEP, "", state.round, raised=True))
        state.say(same, tester, MessageKind.FINDING, finding.claim)
    admitted = (turn or state.proposals[tester]).admit(len(fresh))
    if admitted < len(fresh):
        state.dropped += len(fresh) - admitted
        by = f" from {tester}" if state.panel.is_panel else ""
        state.note(f"{len(fresh) - admitted} findings{by} over the proposal budget were dropped")
    for finding in fresh[:admitted]:
        numbered = finding.model_copy(update={"id": f"F{len(state.threads) + 1}"})
        thread = Thread(numbered, raised_by=tester)
        thread.take(Position(tester, Vote.KEEP, "", state.round, raised=True))
        state.threads[numbered.id] = thread
        state.intents.raised[numbered.id] = numbered
        state.say(thread, tester, MessageKind.FINDING, numbered.claim)
    return admitted


def accept(state: DebateState, thread: Thread, tally: Tally) -> None:
    """Close a finding whose answer the testers accept: fixed by its patch, or withdrawn."""
    answer = thread.answer
    assert answer is not None
    if state.panel.is_panel:
        state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, f"Settled: {tally.describe()}.")
    if answer.stance is Stance.IRRELEVANT_TEST and state.proofs.proven(thread.id):
        why = f"its tester agreed: {answer.argument}"
        state.proofs.settle(thread.id, False, why)
        state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, told_set_aside(why))
    consensus = Consensus.UNANIMOUS if tally.unanimous else Consensus.MAJORITY
    if answer.stance is Stance.INTENDED:
        intended = state.intents.shown(thread.id)
        thread.close(Closure(consensus, Resolution.INTENDED, state.round, intended=intended))
        state.round_progress = True
        return
    resolution = Resolution.FIXED if answer.patch is not None else Resolution.WITHDRAWN
    thread.close(Closure(consensus, resolution, state.round, patch=answer.patch))
    state.round_progress = True


def stand(state: DebateState, thread: Thread, tally: Tally, trigger: ArbitrationTrigger) -> None:
    """Leave open a finding a panel's majority keeps against the coder."""
    thread.trigger = trigger
    note = f"a majority of the testers keeps it against the coder ({tally.describe()})"
    state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, f"Stands: {note}.")
    thread.close(Closure(Consensus.MAJORITY, Resolution.OPEN, state.round, note=note))


def rule(state: DebateState, thread: Thread, ruling: Ruling) -> None:
    """Close a finding by the arbiter's binding ruling, told to the coder as an override."""
    state.say(thread, ARBITER, MessageKind.RULING, ruling.reasoning, ruling.patch)
    on_test = ""
    if ruling.ruling in RELEVANCE_RULINGS:
        relevant = ruling.ruling is RulingKind.TEST_RELEVANT
        state.proofs.settle(thread.id, relevant, ruling.reasoning)
        on_test = "its test exercises its claim; " if relevant else "its test proves nothing; "
        if not relevant:
            state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, told_set_aside(ruling.reasoning))
    if forces_fix(ruling):
        closure = Closure(Consensus.ARBITER, Resolution.FIXED, state.round, patch=ruling.patch)
        verdict = f"{on_test}the coder must adopt the arbiter's patch"
    elif ruling.ruling is RulingKind.INTENDED:
        intended = state.intents.shown(thread.id)
        closure = Closure(Consensus.ARBITER, Resolution.INTENDED, state.round, intended=intended)
        verdict = "the change of behaviour is intended, as the pull request shows: the code stands"
    else:
        closure = Closure(
            Consensus.ARBITER, Resolution.WARNING, state.round, warning=ruling.warning
        )
        warning = (ruling.warning or "").rstrip(". ")
        verdict = f"{on_test}the code stands with a documented warning: {warning}"
    thread.close(closure)
    override = state.say(
        thread,
        SYSTEM_SPEAKER,
        MessageKind.OVERRIDE,
        f"Final ruling on {thread.id}: {verdict}. This ruling cannot be reopened.",
    )
    state.settled_unseen.append(override)


def leave_unresolved(
    state: DebateState,
    threads: Iterable[Thread],
    trigger: ArbitrationTrigger | None,
    note: str,
) -> None:
    """Close `threads` open and unresolved, saying why."""
    for thread in threads:
        thread.trigger = thread.trigger or trigger
        state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, f"Unresolved: {note}.")
        thread.close(Closure(Consensus.UNRESOLVED, Resolution.OPEN, state.round, note=note))


def withdraw_untested(state: DebateState, thread: Thread, why: str = "") -> None:
    """Withdraw a finding whose test passes at the head, and that no other test backs."""
    note = "its test passes at the head" + (f": {why}" if why else "")
    state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, f"Withdrawn: {note}.")
    thread.close(Closure(Consensus.UNANIMOUS, Resolution.WITHDRAWN, state.round, note=note))
    state.round_progress = True


def reopen(state: DebateState, finding_ids: Iterable[str]) -> list[Thread]:
    """Reopen the open findings among `finding_ids` (all of them if empty)."""
    wanted = set(finding_ids)
    chosen = [t for t in state.threads.values() if t.unresolved and (not wanted or t.id in wanted)]
    for thread in chosen:
        thread.reopen()
    return chosen
