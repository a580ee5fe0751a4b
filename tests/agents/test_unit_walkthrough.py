"""A unit's walkthrough: written by its first tester in the report it makes anyway, kept to the
unit's own files, and no call of its own."""

import json
from typing import Any

import pytest

from agents.debate.engine import Debate
from agents.debate.journal import MemoryJournal
from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM, by_agent, by_role
from agents.outcome import StopReason
from agents.protocol import WALKTHROUGH
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig
from tests.scenarios.debates import (
    LOG_FIX,
    PAYMENTS,
    UNDEFINED,
    accept,
    answers,
    concede,
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


def described(*findings: dict[str, Any], walkthrough: Any = DESCRIBED) -> dict[str, Any]:
    """A tester's report with its walkthrough."""
    return {**report(*findings), "walkthrough": walkthrough}


def shows_walkthrough(request: LLMRequest) -> bool:
    schema = request.tool.input_schema()
    return WALKTHROUGH in schema["properties"]


async def test_the_first_report_describes_the_change_and_every_call_offers_the_same_tools() -> None:
    llm = ScriptedLLM(
        by_role(
            tester=[described(UNDEFINED), evaluations(accept("F1"))],
            coder=[answers(concede("F1", LOG_FIX))],
        )
    )

    outcome = await Debate(llm, summary=SummaryConfig()).run(payments_unit())

    # The report, the answer, the evaluation: the walkthrough adds no call.
    assert [r.tool.name for r in llm.requests] == [
        "report_findings",
        "answer_findings",
        "evaluate_answers",
    ]
    assert outcome.calls == 3
    # Every call offers the same tools, the walkthrough's field among them, so the prefix the
    # report wrote to the cache serves the calls after it.
    assert {r.tool.shows for r in llm.requests} == {frozenset({WALKTHROUGH})}
    assert shows_walkthrough(llm.requests[0])
    seed = llm.requests[0]
    assert "`walkthrough`" in seed.blocks[-1].text
    assert not any("`walkthrough`" in b.text for r in llm.requests[1:] for b in r.blocks)
    assert outcome.walkthrough is not None
    assert [(f.path, f.summary) for f in outcome.walkthrough.files] == [(PAYMENTS, "logs payments")]
    assert outcome.walkthrough.attention == []
    assert outcome.walkthrough.effort == 3
    assert outcome.walkthrough.diagram is None  # not asked for
    assert outcome.findings[0].finding.id == "F1"


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
    llm = ScriptedLLM(by_role(tester=[described()]))

    outcome = await Debate(llm, summary=summary).run(payments_unit())

    assert outcome.walkthrough is not None
    assert (outcome.walkthrough.effort, outcome.walkthrough.diagram) == (effort, diagram)
    (seed,) = llm.requests
    assert asked in seed.blocks[-1].text
    assert ("`effort`" in seed.blocks[-1].text) is summary.effort
    assert ("`diagram`" in seed.blocks[-1].text) is summary.diagram


@pytest.mark.parametrize(
    "summary", [None, SummaryConfig(walkthrough=False)], ids=["no config", "turned off"]
)
async def test_without_a_walkthrough_nothing_asks_or_shows_one_and_one_given_is_ignored(
    summary: SummaryConfig | None,
) -> None:
    llm = ScriptedLLM(by_role(tester=[described()]))

    outcome = await Debate(llm, summary=summary).run(payments_unit())

    assert outcome.walkthrough is None
    (seed,) = llm.requests
    assert not shows_walkthrough(seed)
    assert "walkthrough" not in json.dumps([b.text for b in seed.blocks])


async def test_a_panel_asks_the_next_tester_when_the_first_leaves_the_walkthrough_out() -> None:
    policy = DebatePolicy(testers=3)
    first, second, third = policy.panel().names
    llm = ScriptedLLM(
        by_agent({first: [report()], second: [described()], third: [described(walkthrough={})]})
    )

    outcome = await Debate(llm, policy, summary=SummaryConfig()).run(payments_unit())

    asked = {r.agent: "`walkthrough`" in r.blocks[-1].text for r in llm.requests}
    assert asked == {first: True, second: True, third: False}
    assert outcome.walkthrough is not None
    assert outcome.walkthrough.description == DESCRIBED["description"]


async def test_a_unit_no_tester_reported_on_is_not_described() -> None:
    def refuse(request: LLMRequest) -> dict[str, Any]:
        return {"nonsense": True}

    llm = ScriptedLLM(by_agent({"tester": [refuse] * 5}))

    outcome = await Debate(llm, summary=SummaryConfig()).run(payments_unit())

    assert outcome.stop is StopReason.SEED_FAILED
    assert outcome.walkthrough is None


async def test_a_resumed_unit_replays_its_walkthrough_instead_of_paying_again() -> None:
    journal = MemoryJournal()
    first = await Debate(ScriptedLLM(by_role(tester=[described()])), summary=SummaryConfig()).run(
        payments_unit(), journal=journal
    )

    again = ScriptedLLM(by_agent({}))
    resumed = await Debate(again, summary=SummaryConfig()).run(payments_unit(), journal=journal)

    assert again.requests == []
    assert first.walkthrough is not None
    assert resumed.walkthrough == first.walkthrough


@pytest.mark.parametrize(
    "walkthrough",
    [{"effort": 9}, "a paragraph, not an object", {"description": "x" * 5_000}, [DESCRIBED]],
    ids=["effort out of range", "a string", "too long", "a list"],
)
async def test_an_unusable_walkthrough_is_dropped_and_the_findings_stand(walkthrough: Any) -> None:
    llm = ScriptedLLM(
        by_role(
            tester=[described(UNDEFINED, walkthrough=walkthrough), evaluations(accept("F1"))],
            coder=[answers(concede("F1", LOG_FIX))],
        )
    )

    outcome = await Debate(llm, summary=SummaryConfig()).run(payments_unit())

    assert outcome.walkthrough is None
    assert [f.finding.id for f in outcome.findings] == ["F1"]
    assert outcome.stop is StopReason.SETTLED
    # Dropped, not refused: the report is not asked again.
    assert len(llm.calls(llm.requests[0].role)) == 2


async def test_a_ruling_asked_for_later_keeps_the_units_walkthrough() -> None:
    llm = ScriptedLLM(
        by_agent(
            {
                "tester": [described(UNDEFINED), evaluations(reject("F1", "Still undefined."))],
                "coder": [answers(dispute("F1", "log is a builtin."))] * 2,
            }
        )
    )
    no_arbiter = DebatePolicy(arbitration=False)
    debated = await Debate(llm, no_arbiter, summary=SummaryConfig()).run(payments_unit())
    arbiter = ScriptedLLM(by_role(arbiter=[rulings(warn("F1", "Check that `log` exists."))]))

    ruled = await Debate(arbiter, no_arbiter).arbitrate(payments_unit(), debated, ["F1"])

    assert debated.walkthrough is not None
    assert ruled.walkthrough == debated.walkthrough
