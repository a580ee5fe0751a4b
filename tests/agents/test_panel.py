"""Scenario tests of a tester panel: majority votes, ties, stubborn minorities, who hears whom."""

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest

from agents.debate.engine import Debate
from agents.debate.journal import MemoryJournal
from agents.debate.machine import DebateMachine
from agents.debate.state import DebateState
from agents.errors import LLMUnavailable
from agents.models.llm import LLMRequest, Role
from agents.models.scripted import ScriptedLLM, ScriptStep, by_agent
from agents.outcome import Consensus, MessageKind, Outcome, Resolution, StopReason
from agents.protocol import ToolName
from policies.arbitration import ArbitrationTrigger
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from policies.panel import Focus, Topology, Vote
from tests.kits.crash import DiesAt, WorkerDied
from tests.kits.machine import play
from tests.scenarios.debates import (
    LOG_FIX,
    UNDEFINED,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    finding,
    payments_unit,
    reject,
    report,
)
from tests.scenarios.panels import (
    CORRECTNESS,
    FIXED_BY_MAJORITY,
    KEPT,
    PERFORMANCE,
    REPEATED,
    SECURITY,
    TIE_FIXED,
    WITHDRAWN_BY_MAJORITY,
)


async def debate(
    policy: DebatePolicy, script: Mapping[str, list[ScriptStep]]
) -> tuple[Outcome, ScriptedLLM, DebateState]:
    llm = ScriptedLLM(by_agent(script))
    machine = DebateMachine(policy, payments_unit())
    outcome = play(machine.run(), llm, ceiling=TokenCeiling(policy.token_ceiling))
    return outcome, llm, machine.state


def panel(testers: int = 3, **limits: Any) -> DebatePolicy:
    return DebatePolicy(testers=testers, **limits)


def only(outcome: Outcome) -> Any:
    (result,) = outcome.findings
    return result


def asked(request: LLMRequest) -> list[dict[str, Any]]:
    """The answers a tester's evaluation request shows it, as the model reads them."""
    (data,) = re.findall(
        r"<untrusted-answers-\w+>\n(.*)\n</untrusted-answers", request.blocks[-1].text
    )
    answers: list[dict[str, Any]] = json.loads(data)
    return answers


def calls(llm: ScriptedLLM, agent: str, tool: ToolName | None = None) -> list[LLMRequest]:
    return [r for r in llm.requests if r.agent == agent and (tool is None or r.tool.name == tool)]


async def test_a_majority_that_keeps_a_finding_against_the_coder_makes_it_stand() -> None:
    # Two of three testers keep the finding after each of the coder's two answers: it stands
    # when its exchanges run out, by majority, without the arbiter.
    outcome, llm, _ = await debate(panel(max_exchanges_per_finding=2), KEPT)

    result = only(outcome)
    assert (result.consensus, result.resolution) == (Consensus.MAJORITY, Resolution.OPEN)
    assert result.votes == {CORRECTNESS: Vote.KEEP, SECURITY: Vote.KEEP, PERFORMANCE: Vote.ACCEPT}
    assert result.trigger is ArbitrationTrigger.EXCHANGE_LIMIT
    assert "a majority of the testers keeps it" in (result.note or "")
    assert outcome.unresolved == [result]  # it still needs a person: the label goes on
    assert llm.calls(Role.ARBITER) == []
    assert outcome.rounds == 2


async def test_a_majority_that_accepts_a_patch_closes_the_finding_fixed() -> None:
    outcome, llm, _ = await debate(panel(), FIXED_BY_MAJORITY)

    result = only(outcome)
    assert (result.consensus, result.resolution) == (Consensus.MAJORITY, Resolution.FIXED)
    assert result.patch is not None
    assert result.patch.replacement == LOG_FIX["replacement"]
    assert result.votes[PERFORMANCE] is Vote.KEEP
    assert outcome.unresolved == []
    assert llm.calls(Role.ARBITER) == []


async def test_a_panel_that_accepts_unanimously_reports_unanimous() -> None:
    outcome, _, _ = await debate(
        panel(),
        {
            CORRECTNESS: [report(UNDEFINED), evaluations(accept("F1"))],
            SECURITY: [report(), evaluations(accept("F1"))],
            PERFORMANCE: [report(), evaluations(accept("F1"))],
            "coder": [answers(concede("F1", LOG_FIX))],
        },
    )

    result = only(outcome)
    assert (result.consensus, result.resolution) == (Consensus.UNANIMOUS, Resolution.FIXED)
    assert set(result.votes.values()) == {Vote.ACCEPT}


async def test_a_tie_goes_to_the_arbiter_at_once() -> None:
    outcome, llm, _ = await debate(panel(2), TIE_FIXED)

    result = only(outcome)
    assert (result.consensus, result.resolution) == (Consensus.ARBITER, Resolution.FIXED)
    assert result.trigger is ArbitrationTrigger.TIE
    assert result.closed_in_round == 1
    (ruling,) = llm.calls(Role.ARBITER)
    dispute_shown = json.loads(
        re.findall(r"<untrusted-disputes-\w+>\n(.*)\n</untrusted", ruling.blocks[-1].text)[0]
    )["disputes"][0]
    assert dispute_shown["testers_keeping_it"] == [CORRECTNESS]
    assert dispute_shown["testers_accepting_the_answer"] == [SECURITY]
    # The arbiter's budget is pairwise too: its edges to the coder and to both testers.
    spent = {name for name, h in outcome.budget_history.items() if h[-1].spent}
    assert {"arbiter↔coder", f"arbiter↔{CORRECTNESS}", f"arbiter↔{SECURITY}"} <= spent


async def test_a_stubborn_minority_neither_blocks_the_majority_nor_calls_the_arbiter() -> None:
    outcome, llm, _ = await debate(panel(), WITHDRAWN_BY_MAJORITY)

    result = only(outcome)
    assert (result.consensus, result.resolution) == (Consensus.MAJORITY, Resolution.WITHDRAWN)
    assert result.votes == {
        CORRECTNESS: Vote.KEEP,
        SECURITY: Vote.ACCEPT,
        PERFORMANCE: Vote.ACCEPT,
    }
    # The minority's position stays on the record.
    thread = outcome.transcript.thread("F1")
    assert [(m.speaker, m.kind) for m in thread if m.kind is MessageKind.REJECT] == [
        (CORRECTNESS, MessageKind.REJECT)
    ]
    assert "kept by tester-correctness" in thread[-1].text
    assert llm.calls(Role.ARBITER) == []
    assert outcome.rounds == 1


async def test_a_minority_repeating_itself_is_outvoted_not_sent_to_the_arbiter() -> None:
    # Round 1: two keep the finding, so it goes back to the coder. Round 2: the coder concedes
    # with a patch; the majority accepts it while the correctness tester repeats its rejection
    # word for word — a loop on its edge — and the fix is agreed by majority all the same.
    stubborn = reject("F1", "Nothing imports log.")
    outcome, llm, _ = await debate(
        panel(max_retries=2),
        {
            CORRECTNESS: [report(UNDEFINED), evaluations(stubborn), evaluations(stubborn)],
            SECURITY: [report(), evaluations(reject("F1", "It fails.")), evaluations(accept("F1"))],
            PERFORMANCE: [report(), evaluations(accept("F1")), evaluations(accept("F1"))],
            "coder": [
                answers(dispute("F1", "log is a module-level helper.")),
                answers(concede("F1", LOG_FIX)),
            ],
        },
    )

    result = only(outcome)
    assert (result.consensus, result.resolution) == (Consensus.MAJORITY, Resolution.FIXED)
    assert (result.closed_in_round, result.trigger) == (2, None)
    assert result.votes[CORRECTNESS] is Vote.KEEP
    assert llm.calls(Role.ARBITER) == []


async def test_the_coder_answers_the_union_of_open_findings_once_per_round() -> None:
    negative = finding(13, "A negative amount passes the check and raises the balance.", "minor")
    outcome, llm, _ = await debate(
        panel(),
        {
            CORRECTNESS: [report(UNDEFINED), evaluations(accept("F1"), accept("F2"))],
            SECURITY: [report(negative), evaluations(accept("F1"), accept("F2"))],
            PERFORMANCE: [report(), evaluations(accept("F1"), accept("F2"))],
            "coder": [answers(concede("F1", LOG_FIX), dispute("F2", "Amounts are validated."))],
        },
    )

    (coder_call,) = calls(llm, "coder")
    assert coder_call.subject == ("F1", "F2")
    assert [(f.finding.id, f.raised_by) for f in outcome.findings] == [
        ("F1", CORRECTNESS),
        ("F2", SECURITY),
    ]
    # The coder's turn is charged to the edges of the testers it answered.
    coder_spend = [
        name
        for name, history in outcome.budget_history.items()
        if any(e.note == "coder" for e in history)
    ]
    assert sorted(coder_spend) == sorted(f"coder↔{t}" for t in (CORRECTNESS, SECURITY, PERFORMANCE))


async def test_two_testers_raising_one_problem_make_one_finding() -> None:
    again = {**UNDEFINED, "claim": "Every refund raises NameError: `log` is not defined anywhere."}
    outcome, llm, _ = await debate(
        panel(),
        {
            CORRECTNESS: [report(UNDEFINED), evaluations(accept("F1"))],
            SECURITY: [report(again), evaluations(accept("F1"))],
            PERFORMANCE: [report(), evaluations(accept("F1"))],
            "coder": [answers(concede("F1", LOG_FIX))],
        },
    )

    result = only(outcome)
    assert result.raised_by == CORRECTNESS
    raised = [m.speaker for m in outcome.transcript.thread("F1") if m.kind is MessageKind.FINDING]
    assert raised == [CORRECTNESS, SECURITY]
    (coder_call,) = calls(llm, "coder")
    assert coder_call.subject == ("F1",)


async def test_each_tester_reviews_with_its_focus() -> None:
    _, llm, _ = await debate(
        DebatePolicy(testers=2, focus=(Focus.SECURITY,)),
        {SECURITY: [report()], CORRECTNESS: [report()]},
    )

    seeds = {r.agent: " ".join(b.text for b in r.blocks) for r in llm.requests}
    assert "injection" in seeds[SECURITY]
    assert "injection" not in seeds[CORRECTNESS]
    assert "logic errors" in seeds[CORRECTNESS]


def five_testers(topology: Topology) -> tuple[DebatePolicy, dict[str, list[ScriptStep]]]:
    """Five testers, each raising one finding on its own line; the coder disputes all five
    twice; in round 1 every tester keeps the finding it raised and accepts the rest."""
    policy = DebatePolicy(testers=5, topology=topology, max_rounds=2)
    names = policy.panel().names
    lines = (5, 8, 13, 15, 16)
    script: dict[str, list[ScriptStep]] = {}
    for i, name in enumerate(names):
        own = f"F{i + 1}"

        def evaluate(request: LLMRequest, own: str = own) -> dict[str, Any]:
            return evaluations(
                *(
                    reject(f, "Still wrong.") if f == own else accept(f, "Convinced.")
                    for f in request.subject
                )
            )

        script[name] = [
            report(finding(lines[i], f"Problem number {i + 1} of {name}.")),
            evaluate,
            evaluate,
        ]
    disputes = answers(*(dispute(f"F{i}", f"Finding {i} is wrong.") for i in range(1, 6)))
    script["coder"] = [disputes]
    return policy, script


async def test_in_a_ring_each_tester_hears_only_its_neighbours() -> None:
    policy, script = five_testers(Topology.RING)
    outcome, llm, _ = await debate(policy, script)
    names = policy.panel().names

    for i, name in enumerate(names):
        (evaluation,) = calls(llm, name, ToolName.EVALUATE_ANSWERS)
        neighbours = {names[(i - 1) % 5], names[(i + 1) % 5]}
        raisers = {f"F{names.index(n) + 1}" for n in {name, *neighbours}}
        assert set(evaluation.subject) == raisers
    # Each finding was voted on by its raiser and the raiser's two neighbours: one keep, two
    # accepts, so each is withdrawn by majority in round 1 without anyone else hearing of it.
    assert {(f.consensus, f.resolution, len(f.votes)) for f in outcome.findings} == {
        (Consensus.MAJORITY, Resolution.WITHDRAWN, 3)
    }


async def test_in_a_full_panel_every_tester_hears_everyone() -> None:
    policy, script = five_testers(Topology.FULL)
    outcome, llm, _ = await debate(policy, script)

    for name in policy.panel().names:
        (evaluation,) = calls(llm, name, ToolName.EVALUATE_ANSWERS)
        assert evaluation.subject == ("F1", "F2", "F3", "F4", "F5")
    assert {(f.consensus, f.resolution, len(f.votes)) for f in outcome.findings} == {
        (Consensus.MAJORITY, Resolution.WITHDRAWN, 5)
    }


def spreading() -> tuple[DebatePolicy, dict[str, list[ScriptStep]]]:
    """Five testers in a ring over one finding that stays disputed for two rounds."""
    policy = DebatePolicy(testers=5, topology=Topology.RING, max_rounds=2)
    first, second, third, fourth, fifth = policy.panel().names
    keep_1 = reject("F1", "Keep: nothing imports log.")
    script: dict[str, list[ScriptStep]] = {
        first: [report(UNDEFINED), evaluations(keep_1), evaluations(keep_1)],
        second: [
            report(),
            evaluations(reject("F1", "Keep: refunds fail.")),
            evaluations(accept("F1")),
        ],
        third: [report(), evaluations(accept("F1"))],
        fourth: [report(), evaluations(accept("F1"))],
        fifth: [
            report(),
            evaluations(accept("F1", "Fine: log is global.")),
            evaluations(accept("F1")),
        ],
        "coder": [
            answers(dispute("F1", "log is global.")),
            answers(dispute("F1", "log is set up in main.")),
        ],
    }
    return policy, script


async def test_a_disputed_finding_spreads_around_the_ring_with_what_neighbours_said() -> None:
    # Round 1: tester 1 keeps F1 and its neighbours split, so F1 goes back to the coder (two
    # keeps against one accept). Round 2: testers 3 and 4 have heard of it through their
    # neighbours' votes, and see what those neighbours said, not what the others said.
    policy, script = spreading()
    first, second, third, fourth, fifth = policy.panel().names
    outcome, llm, _ = await debate(policy, script)

    assert [r.subject for r in calls(llm, third, ToolName.EVALUATE_ANSWERS)] == [("F1",)]
    (heard_by_third,) = asked(calls(llm, third, ToolName.EVALUATE_ANSWERS)[0])
    assert heard_by_third["raised_by"] == [first]
    assert heard_by_third["testers_you_hear"] == [
        {"tester": second, "round": 1, "vote": "keep", "reason": "Keep: refunds fail."}
    ]
    (heard_by_first,) = asked(calls(llm, first, ToolName.EVALUATE_ANSWERS)[1])
    assert [h["tester"] for h in heard_by_first["testers_you_hear"]] == [second, fifth]
    result = only(outcome)
    assert (result.consensus, result.resolution) == (Consensus.MAJORITY, Resolution.WITHDRAWN)
    assert result.votes == {
        first: Vote.KEEP,
        second: Vote.ACCEPT,
        fifth: Vote.ACCEPT,
        third: Vote.ACCEPT,
        fourth: Vote.ACCEPT,
    }


async def test_a_tester_whose_budget_is_spent_leaves_and_its_votes_stand() -> None:
    # The coder repeats its answer: every coder-tester budget drops to zero, so every tester
    # leaves; two of three kept the finding, so it stands by majority.
    outcome, llm, _ = await debate(panel(), REPEATED)

    result = only(outcome)
    assert (result.consensus, result.resolution) == (Consensus.MAJORITY, Resolution.OPEN)
    assert result.trigger is ArbitrationTrigger.BUDGET
    notes = [m.text for m in outcome.transcript.messages if m.kind is MessageKind.NOTICE]
    assert any("budget with tester-correctness, tester-security" in n for n in notes)
    assert any(n.startswith(f"{PERFORMANCE} leaves the debate") for n in notes)
    assert llm.calls(Role.ARBITER) == []
    for tester in (CORRECTNESS, SECURITY, PERFORMANCE):
        history = outcome.budget_history[f"coder↔{tester}"]
        assert history[-1].limit == history[-1].spent


async def test_a_tester_that_cannot_report_leaves_the_review_to_the_others() -> None:
    down = LLMUnavailable("overloaded")
    outcome, _, _ = await debate(
        panel(2),
        {
            CORRECTNESS: [down, down, evaluations(accept("F1"))],
            SECURITY: [report(UNDEFINED), evaluations(accept("F1"))],
            "coder": [answers(concede("F1", LOG_FIX))],
        },
    )

    assert outcome.stop is StopReason.SETTLED
    assert (only(outcome).consensus, only(outcome).raised_by) == (Consensus.UNANIMOUS, SECURITY)
    notes = [m.text for m in outcome.transcript.messages if m.kind is MessageKind.NOTICE]
    assert f"{CORRECTNESS} could not report findings" in notes


async def test_a_unit_no_tester_reported_on_was_not_reviewed() -> None:
    down = LLMUnavailable("overloaded")
    outcome, _, _ = await debate(panel(2), {CORRECTNESS: [down, down], SECURITY: [down, down]})

    assert outcome.stop is StopReason.SEED_FAILED
    assert outcome.error == "no tester could report findings"


@pytest.mark.parametrize("dies_at", [1, 4, 7, 10, 13])
async def test_a_panel_debate_restarted_after_a_crash_resumes_where_it_stopped(
    dies_at: int,
) -> None:
    policy, script = spreading()
    whole = await Debate(ScriptedLLM(by_agent(script)), policy).run(payments_unit())
    policy, script = spreading()
    llm, journal = ScriptedLLM(by_agent(script)), MemoryJournal()
    with pytest.raises(WorkerDied):
        await Debate(DiesAt(llm, dies_at), policy).run(payments_unit(), journal=journal)

    resumed = await Debate(llm, policy).run(payments_unit(), journal=journal)

    assert resumed.model_dump(mode="json") == whole.model_dump(mode="json")
    assert len(llm.requests) == whole.calls


async def test_a_panel_debate_is_deterministic() -> None:
    policy, script = five_testers(Topology.RING)
    first, _, run_1 = await debate(policy, script)
    policy, script = five_testers(Topology.RING)
    second, _, run_2 = await debate(policy, script)

    assert run_1.floor == run_2.floor
    assert first.transcript.messages == second.transcript.messages
    assert first.findings == second.findings


async def test_the_router_never_gives_the_floor_twice_in_a_row() -> None:
    policy, script = five_testers(Topology.RING)
    _, _, run = await debate(policy, script)

    assert run.floor[:6] == ["coder", *policy.panel().names]
    assert all(a != b for a, b in zip(run.floor, run.floor[1:], strict=False))
