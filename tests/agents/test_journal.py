"""A debate restarted after a crash resumes from its journal: same outcome, nothing paid twice."""

from typing import Any

import pytest

from agents.debate.engine import Debate
from agents.debate.journal import MemoryJournal
from agents.errors import LLMUnavailable
from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM, by_role
from agents.outcome import Outcome
from policies.budget import Settle, TokenCeiling
from tests.kits.crash import DiesAt, WorkerDied
from tests.scenarios.debates import (
    NEGATIVE,
    NEGATIVE_FIX,
    UNDEFINED,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    patch,
    payments_unit,
    reject,
    report,
    rulings,
    warn,
)


def script() -> ScriptedLLM:
    """Three rounds, a refused call, a repeated answer the arbiter settles: eight calls."""
    return ScriptedLLM(
        by_role(
            tester=[
                report(UNDEFINED, NEGATIVE),
                evaluations(reject("F1", "logger is not defined either."), accept("F2")),
                evaluations(reject("F1", "Still undefined.")),
            ],
            coder=[
                answers(
                    concede("F1", patch(16, "    logger.info(payment.id)")),
                    concede("F2", NEGATIVE_FIX),
                ),
                LLMUnavailable("overloaded"),
                answers(dispute("F1", "logger is module-level.")),
                answers(dispute("F1", "logger is module-level.")),
            ],
            arbiter=[rulings(warn("F1", "Check that `logger` exists."))],
        )
    )


class Counter:
    """A shared allowance that counts what is charged to it."""

    def __init__(self) -> None:
        self.charged = 0

    async def reserve(self, tokens: int) -> Settle | None:
        async def settle(used: int) -> None:
            self.charged += used

        return settle


def dumped(outcome: Outcome) -> dict[str, Any]:
    return outcome.model_dump(mode="json")


async def uninterrupted() -> tuple[Outcome, ScriptedLLM]:
    llm = script()
    return await Debate(llm).run(payments_unit(), journal=MemoryJournal()), llm


async def test_a_journal_records_every_call_of_a_debate() -> None:
    journal = MemoryJournal()
    llm = script()

    outcome = await Debate(llm).run(payments_unit(), journal=journal)

    assert len(journal.kept) == len(llm.requests) == outcome.calls == 8
    assert [e.unavailable for e in journal.kept].count("overloaded") == 1


@pytest.mark.parametrize("dies_at", range(1, 9))
async def test_a_debate_restarted_after_a_crash_resumes_where_it_stopped(dies_at: int) -> None:
    whole, whole_llm = await uninterrupted()
    journal, llm = MemoryJournal(), script()
    with pytest.raises(WorkerDied):
        await Debate(DiesAt(llm, dies_at)).run(payments_unit(), journal=journal)
    answered_before = len(llm.requests)
    shared = Counter()

    resumed = await Debate(llm, ceiling=TokenCeiling(10**9, shared)).run(
        payments_unit(), journal=journal
    )

    assert dumped(resumed) == dumped(whole)
    # Every call was answered once: the model saw exactly the uninterrupted debate's calls.
    assert llm.requests == whole_llm.requests
    live = llm.requests[answered_before:]
    assert shared.charged == sum(
        e.response.usage.billed for e in journal.kept[answered_before:] if e.response
    )
    assert len(live) == whole.calls - (dies_at - 1)


async def test_a_journal_that_no_longer_matches_the_debate_is_dropped_from_there() -> None:
    whole, whole_llm = await uninterrupted()
    journal = MemoryJournal()
    await Debate(script()).run(payments_unit(), journal=journal)
    # The third call was recorded for another question (another version of Tiebreak asked it).
    journal.kept[2] = journal.kept[2].model_copy(update={"request": "0" * 64})
    llm = script()
    for request in whole_llm.requests[:2]:  # the script's answers the replay gives instead
        await llm.complete(request)

    resumed = await Debate(llm).run(payments_unit(), journal=journal)

    assert dumped(resumed) == dumped(whole)
    assert llm.requests[2:] == whole_llm.requests[2:]  # asked live from the third call on
    assert len(journal.kept) == whole.calls  # the stale tail replaced, not appended to


async def test_a_refusal_in_the_journal_is_replayed_as_a_refusal() -> None:
    whole, _ = await uninterrupted()
    journal = MemoryJournal()
    await Debate(script()).run(payments_unit(), journal=journal)
    llm = script()

    resumed = await Debate(llm).run(payments_unit(), journal=journal)

    assert llm.requests == []
    assert dumped(resumed) == dumped(whole)
    (refused,) = [t for t in resumed.transcript.turns if t.error]
    assert refused.error == "the model was unavailable: overloaded"


class Ordered:
    """A shared allowance that notes each reservation among the calls the debate announces."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def reserve(self, tokens: int) -> Settle | None:
        self.events.append("reserved")

        async def settle(used: int) -> None:
            pass

        return settle


async def test_each_live_call_is_announced_before_its_reservation_never_a_replayed_one() -> None:
    _, whole_llm = await uninterrupted()
    journal, llm = MemoryJournal(), script()
    with pytest.raises(WorkerDied):
        await Debate(DiesAt(llm, 4)).run(payments_unit(), journal=journal)
    answered_before = len(llm.requests)
    shared, asked = Ordered(), []

    def asking(request: LLMRequest) -> None:
        asked.append(request)
        shared.events.append("asked")

    ceiling = TokenCeiling(10**9, shared)
    await Debate(llm, ceiling=ceiling, asking=asking).run(payments_unit(), journal=journal)

    live = llm.requests[answered_before:]
    assert asked == live == whole_llm.requests[answered_before:]
    assert shared.events == ["asked", "reserved"] * len(live)
