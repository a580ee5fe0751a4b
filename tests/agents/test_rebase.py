"""Changes to a finished review carried onto the review as another change left it: what each
finding ends as, and what the transcript and the totals keep."""

from collections.abc import Awaitable, Callable

import pytest

from agents.debate.engine import Debate
from agents.debate.hearing import PersonReply
from agents.models.scripted import ScriptedLLM, by_role
from agents.outcome import Outcome, Resolution
from agents.rebase import rebase
from agents.review import Review
from policies.debate import DebatePolicy
from tests.scenarios.debates import (
    LOG_FIX,
    NEGATIVE,
    NEGATIVE_FIX,
    UNDEFINED,
    accept,
    answers,
    dispute,
    evaluations,
    force_fix,
    payments_unit,
    reject,
    report,
    rulings,
)

OPEN, WITHDRAWN, FIXED = Resolution.OPEN, Resolution.WITHDRAWN, Resolution.FIXED

Change = Callable[[Outcome], Awaitable[Outcome]]


async def both_open() -> Outcome:
    """A finished debate whose two findings, F1 and F2, stay open."""
    llm = ScriptedLLM(
        by_role(
            tester=[
                report(UNDEFINED, NEGATIVE),
                evaluations(reject("F1", "No."), reject("F2", "No.")),
            ],
            coder=[answers(dispute("F1", "Fine."), dispute("F2", "Fine."))] * 2,
        )
    )
    return await Debate(llm, DebatePolicy(arbitration=False)).run(payments_unit())


def heard(finding_id: str, accepted: bool) -> Change:
    """A person's reply on the finding, which the tester accepts or rejects."""
    decision = accept(finding_id, "Right.") if accepted else reject(finding_id, "Still wrong.")

    async def change(outcome: Outcome) -> Outcome:
        llm = ScriptedLLM(by_role(tester=[evaluations(decision)]))
        reply = PersonReply(login="octocat", text=f"About {finding_id}: it is fine.")
        changed, _ = await Debate(llm).hear(payments_unit(), outcome, finding_id, reply)
        return changed

    return change


def ruled(*finding_ids: str) -> Change:
    """The arbiter, asked by a person, forces a fix of each finding."""
    fixes = {"F1": LOG_FIX, "F2": NEGATIVE_FIX}

    async def change(outcome: Outcome) -> Outcome:
        ruling = rulings(*(force_fix(i, fixes[i]) for i in finding_ids))
        llm = ScriptedLLM(by_role(arbiter=[ruling]))
        return await Debate(llm).arbitrate(payments_unit(), outcome, finding_ids)

    return change


async def unchanged(outcome: Outcome) -> Outcome:
    return outcome


@pytest.mark.parametrize(
    ("landed_first", "change", "decided", "ends", "applied"),
    [
        (unchanged, heard("F1", True), ["F1"], [WITHDRAWN, OPEN], ["F1"]),
        (heard("F2", True), heard("F1", True), ["F1"], [WITHDRAWN, WITHDRAWN], ["F1"]),
        (heard("F2", False), heard("F1", True), ["F1"], [WITHDRAWN, OPEN], ["F1"]),
        (heard("F1", True), heard("F1", False), ["F1"], [WITHDRAWN, OPEN], []),
        (heard("F1", True), ruled("F1", "F2"), ["F1", "F2"], [WITHDRAWN, FIXED], ["F2"]),
        (ruled("F1"), heard("F1", True), ["F1"], [FIXED, OPEN], []),
    ],
    ids=[
        "nothing landed first",
        "the other finding withdrawn first",
        "a reply on the other finding rejected first",
        "the same finding withdrawn first",
        "rulings on a finding withdrawn first",
        "a reply on a finding ruled first",
    ],
)
async def test_a_change_lands_on_the_findings_still_open(
    landed_first: Change,
    change: Change,
    decided: list[str],
    ends: list[Resolution],
    applied: list[str],
) -> None:
    read = await both_open()
    onto, changed = await landed_first(read), await change(read)

    rebased = rebase(
        Review(units=[changed]),
        Review(units=[read]),
        Review(units=[onto]),
        [(read.unit_id, i) for i in decided],
    )

    (unit,) = rebased.review.units
    assert [f.resolution for f in unit.findings] == ends
    assert sorted(i for _, i in rebased.applied) == applied
    if not applied:
        assert unit == onto
        return
    # Both changes' calls are on the record, and what each said of the findings it settled.
    new_calls = changed.calls - read.calls
    assert unit.calls == onto.calls + new_calls
    assert unit.transcript.turns == onto.transcript.turns + changed.transcript.turns[read.calls :]
    assert unit.usage.billed == onto.usage.billed + changed.usage.billed - read.usage.billed
    for finding_id in applied:
        assert unit.transcript.thread(finding_id)[-1] == changed.transcript.thread(finding_id)[-1]
    assert unit.transcript.messages[: len(onto.transcript.messages)] == onto.transcript.messages


async def test_a_change_to_nothing_the_review_has_changes_nothing() -> None:
    read = await both_open()
    changed = await heard("F1", True)(read)

    rebased = rebase(
        Review(units=[changed]), Review(units=[read]), Review(units=[read]), [("elsewhere", "F1")]
    )

    assert rebased.review == Review(units=[read])
    assert rebased.applied == frozenset()
