"""What each role reads of a debate: its entries in a fixed order, a finding whole, and no
entry for what there is nothing to say about."""

import json
import re
from typing import Any

from agents.debate.machine import DebateMachine
from agents.debate.proofs import ProofTerms
from agents.models.llm import LLMRequest, Role
from agents.models.scripted import ScriptedLLM, by_agent, by_role
from agents.verification import Evidence
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from tests.kits.machine import play, shown_by
from tests.scenarios import panels
from tests.scenarios.debates import (
    LOG_FIX,
    UNDEFINED,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    payments_unit,
    reject,
    report,
)
from tests.scenarios.proofs import COMMAND, ScriptedVerifier, reproduction

INNER = re.compile(r"<untrusted-[a-z]+-[0-9a-f]{16}>\n(?P<data>.*)\n</untrusted-", re.DOTALL)
FINDING_KEYS = ["path", "start_line", "end_line", "id", "severity", "claim", "evidence"]


def shown(request: LLMRequest) -> Any:
    """The data the request's turn shows."""
    match = INNER.search(request.blocks[-1].text)
    assert match is not None, request.blocks[-1].text
    return json.loads(match["data"])


def debated(
    policy: DebatePolicy, llm: ScriptedLLM, verifier: ScriptedVerifier | None = None
) -> None:
    terms = ProofTerms(COMMAND) if verifier is not None else None
    machine = DebateMachine(policy, payments_unit(), terms=terms)

    shows = shown_by(verifier) if verifier is not None else None
    play(machine.run(), llm, ceiling=TokenCeiling(policy.token_ceiling), shows=shows)


def test_the_coder_reads_each_finding_whole_its_last_answer_and_the_last_rejection() -> None:
    llm = ScriptedLLM(
        by_role(
            tester=[
                report(UNDEFINED),
                evaluations(reject("F1", "Nothing defines log.")),
                evaluations(accept("F1", "Fixed.")),
            ],
            coder=[
                answers(dispute("F1", "log is a builtin.")),
                answers(concede("F1", LOG_FIX, "Right.")),
            ],
        )
    )

    debated(DebatePolicy(), llm)

    first, second = (shown(r) for r in llm.calls(Role.CODER))
    assert list(first) == ["open_findings", "protected_paths"]
    (fresh,) = first["open_findings"]
    # The finding as reported, its empty test included; nothing said yet of an answer.
    assert list(fresh) == ["finding"]
    assert list(fresh["finding"]) == [*FINDING_KEYS, "reproduction"]
    assert fresh["finding"]["reproduction"] is None
    (answered,) = second["open_findings"]
    assert list(answered) == ["finding", "your_last_answer", "tester_rejected_it_because"]
    # The answer without the patch it did not give.
    assert answered["your_last_answer"] == {"stance": "dispute", "argument": "log is a builtin."}
    assert answered["tester_rejected_it_because"] == "Nothing defines log."


def test_a_tester_reads_the_answer_the_lines_its_patch_replaces_and_both_test_runs() -> None:
    tested = {**UNDEFINED, "reproduction": reproduction("tests/test_refund.py")}
    verifier = ScriptedVerifier(
        shows={"tests/test_refund.py": Evidence.REPRODUCED}, fixes={LOG_FIX["replacement"]: True}
    )
    llm = ScriptedLLM(
        by_role(
            tester=[report(tested), evaluations(accept("F1", "Fixed."))],
            coder=[answers(concede("F1", LOG_FIX, "Right."))],
        )
    )

    debated(DebatePolicy(), llm, verifier)

    _, evaluating = llm.calls(Role.TESTER)
    evaluation = shown(evaluating)
    (entry,) = evaluation
    assert list(entry) == [
        "finding",
        "coder_answer",
        "lines_the_patch_replaces",
        "test_run",
        "patch_test_run",
    ]
    assert list(entry["coder_answer"]) == ["stance", "argument", "patch"]
    assert list(entry["test_run"]) == ["verdict", "what_it_shows", "output_at_head"]
    assert entry["lines_the_patch_replaces"] == ["    log(payment.id, amount)"]
    assert entry["test_run"]["verdict"] == "reproduced"
    assert entry["patch_test_run"]["verified"] is True
    assert list(entry["patch_test_run"]) == ["verified", "what_it_shows", "output"]


def test_the_arbiter_of_a_panel_reads_who_said_what_and_every_testers_vote() -> None:
    llm = ScriptedLLM(by_agent({k: list(v) for k, v in panels.TIE_WARNED.items()}))

    debated(DebatePolicy(testers=2), llm)

    (ruling,) = [shown(r) for r in llm.calls(Role.ARBITER)]
    assert list(ruling) == ["disputes", "protected_paths"]
    (dispute_,) = ruling["disputes"]
    assert list(dispute_) == [
        "finding",
        "why_it_reached_you",
        "latest_messages",
        "testers_keeping_it",
        "testers_accepting_the_answer",
    ]
    assert dispute_["why_it_reached_you"] == "tie"
    assert dispute_["testers_keeping_it"] == [panels.CORRECTNESS]
    assert dispute_["testers_accepting_the_answer"] == [panels.SECURITY]
    assert [list(m) for m in dispute_["latest_messages"]] == [["from", "kind", "text"]] * len(
        dispute_["latest_messages"]
    )
    assert dispute_["latest_messages"][-1]["from"] == panels.SECURITY
