"""A unit's walkthrough: one call after its debate, on the prefix the debate cached, kept to
the unit's own files and journaled like the debate's calls."""

from typing import Any

import pytest

from agents.describing import AGENT
from agents.engine import Debate
from agents.journal import MemoryJournal
from agents.llm import LLMRequest
from agents.outcome import StopReason
from agents.protocol import ToolName
from agents.scripted import ScriptedLLM, by_agent, by_role
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig
from tests.scenarios.debates import (
    PAYMENTS,
    UNDEFINED,
    answers,
    dispute,
    evaluations,
    payments_unit,
    reject,
    report,
    rulings,
    warn,
)

DESCRIBED: dict[str, Any] = {
    "description": "Logs each payment and rejects negative amounts.",
    "files": [
        {"path": PAYMENTS, "summary": "logs payments"},
        {"path": PAYMENTS, "summary": "named twice"},
        {"path": "elsewhere.py", "summary": "not in this unit"},
    ],
    "attention": [{"path": "elsewhere.py", "why": "not in this unit"}],
    "effort": 3,
    "diagram": "sequenceDiagram\n    A->>B: pay",
}


def scripted(*walkthroughs: dict[str, Any] | Exception) -> ScriptedLLM:
    return ScriptedLLM(
        by_agent({"tester": [{"findings": []}]}), walkthrough=by_agent({AGENT: list(walkthroughs)})
    )


async def test_the_walkthrough_reads_the_debates_cached_prefix_and_keeps_to_the_units_files() -> (
    None
):
    llm = scripted(DESCRIBED)

    outcome = await Debate(llm, summary=SummaryConfig()).run(payments_unit())

    seed, describe = llm.requests
    assert describe.tool.name is ToolName.DESCRIBE_CHANGE
    # The same tools, system prompt and stable blocks: the provider's cache serves them.
    assert describe.system == seed.system
    assert describe.role is seed.role
    assert [b for b in describe.blocks if b.stable] == [b for b in seed.blocks if b.stable]
    assert outcome.walkthrough is not None
    assert [(f.path, f.summary) for f in outcome.walkthrough.files] == [(PAYMENTS, "logs payments")]
    assert outcome.walkthrough.attention == []
    assert outcome.walkthrough.effort == 3
    assert outcome.walkthrough.diagram is None  # not asked for
    assert outcome.calls == 2


@pytest.mark.parametrize(
    ("summary", "effort", "diagram", "asked"),
    [
        (SummaryConfig(), 3, None, "`effort`"),
        (SummaryConfig(effort=False), None, None, "`description`"),
        (SummaryConfig(diagram=True), 3, "sequenceDiagram\n    A->>B: pay", "`diagram`"),
    ],
    ids=["defaults", "no effort", "diagram"],
)
async def test_the_walkthrough_asks_and_keeps_what_the_config_says(
    summary: SummaryConfig, effort: int | None, diagram: str | None, asked: str
) -> None:
    llm = scripted(DESCRIBED)

    outcome = await Debate(llm, summary=summary).run(payments_unit())

    assert outcome.walkthrough is not None
    assert (outcome.walkthrough.effort, outcome.walkthrough.diagram) == (effort, diagram)
    assert asked in llm.requests[-1].blocks[-1].text


@pytest.mark.parametrize(
    "summary", [None, SummaryConfig(walkthrough=False)], ids=["no config", "turned off"]
)
async def test_no_walkthrough_no_call(summary: SummaryConfig | None) -> None:
    llm = scripted()

    outcome = await Debate(llm, summary=summary).run(payments_unit())

    assert outcome.walkthrough is None
    assert [r.agent for r in llm.requests] == ["tester"]


async def test_a_unit_no_tester_reported_on_is_not_described() -> None:
    def refuse(request: LLMRequest) -> dict[str, Any]:
        return {"nonsense": True}

    llm = ScriptedLLM(by_agent({"tester": [refuse] * 5}))

    outcome = await Debate(llm, summary=SummaryConfig()).run(payments_unit())

    assert outcome.stop is StopReason.SEED_FAILED
    assert outcome.walkthrough is None
    assert all(r.agent == "tester" for r in llm.requests)


async def test_a_resumed_unit_replays_its_walkthrough_instead_of_paying_again() -> None:
    journal = MemoryJournal()
    first = await Debate(scripted(DESCRIBED), summary=SummaryConfig()).run(
        payments_unit(), journal=journal
    )

    again = ScriptedLLM(by_agent({}), walkthrough=by_agent({}))
    resumed = await Debate(again, summary=SummaryConfig()).run(payments_unit(), journal=journal)

    assert again.requests == []
    assert resumed.walkthrough == first.walkthrough


async def test_an_unusable_walkthrough_leaves_none_and_the_review_stands() -> None:
    llm = scripted({"effort": 9}, {"effort": 9}, {"effort": 9})

    outcome = await Debate(llm, summary=SummaryConfig()).run(payments_unit())

    assert outcome.walkthrough is None
    assert outcome.stop is StopReason.NO_FINDINGS


async def test_a_walkthrough_the_ceiling_has_no_room_for_is_left_out_and_the_review_stands() -> (
    None
):
    measured = scripted(DESCRIBED)
    await Debate(measured, summary=SummaryConfig()).run(payments_unit())
    seed_reservation = measured.requests[0].estimated_tokens()
    llm = scripted(DESCRIBED)

    # Room for the report's call, and then too little for the walkthrough's.
    ceiling = TokenCeiling(seed_reservation)
    outcome = await Debate(llm, summary=SummaryConfig(), ceiling=ceiling).run(payments_unit())

    assert outcome.stop is StopReason.NO_FINDINGS
    assert outcome.walkthrough is None
    assert [r.agent for r in llm.requests] == ["tester"]


async def test_a_ruling_asked_for_later_keeps_the_units_walkthrough() -> None:
    llm = ScriptedLLM(
        by_agent(
            {
                "tester": [report(UNDEFINED), evaluations(reject("F1", "Still undefined."))],
                "coder": [answers(dispute("F1", "log is a builtin."))] * 2,
            }
        ),
        walkthrough=by_agent({AGENT: [DESCRIBED]}),
    )
    no_arbiter = DebatePolicy(arbitration=False)
    debated = await Debate(llm, no_arbiter, summary=SummaryConfig()).run(payments_unit())
    arbiter = ScriptedLLM(by_role(arbiter=[rulings(warn("F1", "Check that `log` exists."))]))

    ruled = await Debate(arbiter, no_arbiter).arbitrate(payments_unit(), debated, ["F1"])

    assert debated.walkthrough is not None
    assert ruled.walkthrough == debated.walkthrough
