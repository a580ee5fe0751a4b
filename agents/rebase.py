"""A change to a finished review, carried onto the review as it now stands.

A person's reply heard, or rulings asked of the arbiter, change some findings of a review that
was read before the model was called. Meanwhile another change may have landed on the same
review: another reply withdrew another finding, the arbiter ruled on it. Like a commit rebased
onto a branch that moved, the change is replayed onto the review as it now stands, finding by
finding: each finding it decided that is still open there takes the change's end, with the
messages about it and the change's model calls; a finding that another change settled first
keeps that end, and the change's word on it is dropped.
"""

from collections.abc import Collection
from dataclasses import dataclass

from agents.models.llm import Role, Usage
from agents.outcome import Outcome, Transcript
from agents.review import Review

FindingKey = tuple[str, str]
"""A finding of a review: (unit id, finding id)."""


@dataclass(frozen=True)
class Rebased:
    review: Review
    """The review as it stands, with the change carried onto it."""
    applied: frozenset[FindingKey]
    """The findings the change decided that were still open, and now end as it decided."""


def rebase(changed: Review, read: Review, onto: Review, decided: Collection[FindingKey]) -> Rebased:
    """Carry the change that made `changed` from `read` (its findings `decided`) onto
    `onto`, a later state of the same review."""
    before = {u.unit_id: u for u in read.units}
    after = {u.unit_id: u for u in changed.units}
    units, applied = [], set()
    for unit in onto.units:
        ids = {finding for unit_id, finding in decided if unit_id == unit.unit_id}
        if ids and unit.unit_id in before and unit.unit_id in after:
            unit, taken = _rebase_unit(after[unit.unit_id], before[unit.unit_id], unit, ids)
            applied |= {(unit.unit_id, finding) for finding in taken}
        units.append(unit)
    return Rebased(Review(units=units), frozenset(applied))


def _rebase_unit(
    changed: Outcome, read: Outcome, onto: Outcome, decided: set[str]
) -> tuple[Outcome, set[str]]:
    ends = {f.finding.id: f for f in changed.findings}
    taken = {f.finding.id for f in onto.unresolved} & decided & ends.keys()
    if not taken:
        return onto, taken
    messages = [
        m
        for m in changed.transcript.messages[len(read.transcript.messages) :]
        if m.finding_id is None or m.finding_id in taken
    ]
    # The change's calls were made and paid for, whatever became of their findings.
    turns = changed.transcript.turns[len(read.transcript.turns) :]
    usage: dict[Role, Usage] = dict(onto.usage_by_role)
    for turn in turns:
        usage[turn.role] = usage.get(turn.role, Usage()) + turn.usage
    history = dict(onto.budget_history)
    for edge, events in changed.budget_history.items():
        history[edge] = history.get(edge, []) + events[len(read.budget_history.get(edge, [])) :]
    return onto.model_copy(
        update={
            "findings": [ends[f.finding.id] if f.finding.id in taken else f for f in onto.findings],
            "rounds": max(onto.rounds, changed.rounds),
            "calls": onto.calls + len(turns),
            "failed_turns": onto.failed_turns + changed.failed_turns - read.failed_turns,
            "partial_turns": onto.partial_turns + changed.partial_turns - read.partial_turns,
            "usage_by_role": usage,
            "budget_history": history,
            "transcript": Transcript(
                messages=[*onto.transcript.messages, *messages],
                turns=[*onto.transcript.turns, *turns],
            ),
        }
    ), taken
