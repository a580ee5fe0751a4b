"""The four debate tools: their input models, validation rules and JSON Schemas."""

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from agents.protocol import (
    REPRODUCTION,
    TESTED_TOOLS,
    TOOLS,
    WALKTHROUGH,
    Answer,
    AnswerFindings,
    Arbitrate,
    EvaluateAnswers,
    Finding,
    Patch,
    ReportFindings,
    Reproduction,
    Ruling,
    RulingKind,
    Severity,
    Stance,
    ToolName,
    toolset,
)

PATCH: dict[str, Any] = {
    "path": "src/cart.py",
    "start_line": 32,
    "end_line": 32,
    "replacement": "    value = subtotal(items) * (1 + tax)",
}

FINDING: dict[str, Any] = {
    "path": "src/cart.py",
    "start_line": 32,
    "end_line": 33,
    "id": "f1",
    "severity": "major",
    "claim": "The tax rate is applied as a multiplier.",
    "evidence": "total([Item(10)], 0.2) returns 2.0",
}


# --- validation --------------------------------------------------------------------------


def test_report_findings_accepts_what_a_model_sends() -> None:
    report = ReportFindings.model_validate({"findings": [FINDING]})

    (found,) = report.findings
    assert found.severity is Severity.MAJOR
    assert (found.path, found.start_line, found.end_line) == ("src/cart.py", 32, 33)


def test_finding_defaults() -> None:
    found = Finding.model_validate(
        {"path": "a.py", "start_line": 1, "end_line": 1, "severity": "nit", "claim": "typo"}
    )

    assert (found.id, found.evidence) == ("", "")


def test_unknown_fields_are_ignored() -> None:
    found = Finding.model_validate({**FINDING, "confidence": 0.9})

    assert "confidence" not in found.model_dump()


def test_models_are_frozen() -> None:
    found = Finding.model_validate(FINDING)

    with pytest.raises(ValidationError):
        found.claim = "something else"  # type: ignore[misc]


@pytest.mark.parametrize("severity", ["critical", "BLOCKER", "", "high", 1])
def test_unknown_severity_is_refused(severity: object) -> None:
    with pytest.raises(ValidationError, match="severity"):
        Finding.model_validate({**FINDING, "severity": severity})


@pytest.mark.parametrize(
    ("severity", "rank"),
    [(Severity.BLOCKER, 0), (Severity.MAJOR, 1), (Severity.MINOR, 2), (Severity.NIT, 3)],
)
def test_severity_rank_puts_the_most_severe_first(severity: Severity, rank: int) -> None:
    assert severity.rank == rank


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param({"claim": ""}, "claim", id="empty-claim"),
        pytest.param({"claim": "x" * 2_001}, "claim", id="long-claim"),
        pytest.param({"evidence": "x" * 8_001}, "evidence", id="long-evidence"),
        pytest.param({"id": "x" * 65}, "id", id="long-id"),
        pytest.param({"path": ""}, "path", id="empty-path"),
        pytest.param({"start_line": 0}, "start_line", id="line-zero"),
        pytest.param({"start_line": 34}, "start_line must not be after end_line", id="reversed"),
    ],
)
def test_invalid_finding_is_refused(change: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        Finding.model_validate({**FINDING, **change})


def test_patch_replacement_length_is_bounded() -> None:
    with pytest.raises(ValidationError, match="replacement"):
        Patch.model_validate({**PATCH, "replacement": "x" * 40_001})


@pytest.mark.parametrize(
    ("model", "data", "message"),
    [
        pytest.param(
            Answer,
            {"finding_id": "f1", "stance": "concede", "argument": "You are right."},
            "conceding f1 needs a patch",
            id="concede-without-patch",
        ),
        pytest.param(
            Answer,
            {"finding_id": "f1", "stance": "concede", "patch": None},
            "conceding f1 needs a patch",
            id="concede-with-null-patch",
        ),
        pytest.param(
            Answer,
            {"finding_id": "f1", "stance": "agree", "patch": PATCH},
            "stance",
            id="unknown-stance",
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f2", "ruling": "force_fix", "reasoning": "The tester is right."},
            "force_fix on f2 needs a patch",
            id="force-fix-without-patch",
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f3", "ruling": "accept_with_warning"},
            "accept_with_warning on f3 needs a warning",
            id="warning-missing",
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f3", "ruling": "accept_with_warning", "warning": ""},
            "accept_with_warning on f3 needs a warning",
            id="warning-empty",
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f3", "ruling": "dismiss", "warning": "w"},
            "ruling",
            id="unknown-ruling",
        ),
        pytest.param(
            Answer,
            {"finding_id": "f1", "stance": "irrelevant_test", "argument": " "},
            "irrelevant_test on f1 needs an argument",
            id="irrelevant-test-without-why",
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f5", "ruling": "test_relevant", "reasoning": "It calls total()."},
            "test_relevant on f5 needs a patch",
            id="test-relevant-without-patch",
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f6", "ruling": "test_irrelevant", "reasoning": "It greps."},
            "test_irrelevant on f6 needs a patch or a warning",
            id="test-irrelevant-without-either",
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f6", "ruling": "test_irrelevant", "patch": PATCH, "warning": "w"},
            "test_irrelevant on f6 needs a patch or a warning",
            id="test-irrelevant-with-both",
        ),
        pytest.param(
            ReportFindings,
            {"findings": [{**FINDING, "severity": "critical"}]},
            "severity",
            id="report-with-unknown-severity",
        ),
        pytest.param(ReportFindings, {}, "findings", id="report-without-findings"),
        pytest.param(
            AnswerFindings,
            {"answers": [{"finding_id": "f1", "stance": "concede"}]},
            "conceding f1 needs a patch",
            id="answers-with-bare-concession",
        ),
        pytest.param(
            Arbitrate,
            {"rulings": [{"finding_id": "f4", "ruling": "force_fix"}]},
            "force_fix on f4 needs a patch",
            id="rulings-with-bare-force-fix",
        ),
        pytest.param(
            EvaluateAnswers,
            {"evaluations": [{"finding_id": "f1", "decision": "maybe"}]},
            "decision",
            id="unknown-decision",
        ),
    ],
)
def test_incomplete_tool_input_is_refused(
    model: type[BaseModel], data: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        model.model_validate(data)


@pytest.mark.parametrize(
    ("model", "data"),
    [
        pytest.param(
            Answer, {"finding_id": "f1", "stance": "concede", "patch": PATCH}, id="concede"
        ),
        pytest.param(
            Answer, {"finding_id": "f1", "stance": "dispute", "argument": "Intended."}, id="dispute"
        ),
        pytest.param(
            Ruling, {"finding_id": "f2", "ruling": "force_fix", "patch": PATCH}, id="force-fix"
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f3", "ruling": "accept_with_warning", "warning": "Rounding drifts."},
            id="accept-with-warning",
        ),
        pytest.param(
            Answer,
            {"finding_id": "f1", "stance": "irrelevant_test", "argument": "It reads the text."},
            id="irrelevant-test",
        ),
        pytest.param(
            Ruling, {"finding_id": "f2", "ruling": "test_relevant", "patch": PATCH}, id="relevant"
        ),
        pytest.param(
            Ruling,
            {"finding_id": "f3", "ruling": "test_irrelevant", "warning": "Untested rounding."},
            id="irrelevant-with-warning",
        ),
        pytest.param(
            Ruling, {"finding_id": "f3", "ruling": "test_irrelevant", "patch": PATCH}, id="irr-fix"
        ),
        pytest.param(
            EvaluateAnswers,
            {"evaluations": [{"finding_id": "f1", "decision": "accept"}]},
            id="evaluations-without-new-findings",
        ),
    ],
)
def test_complete_tool_input_is_accepted(model: type[BaseModel], data: dict[str, Any]) -> None:
    model.model_validate(data)


def test_enum_fields_parse_to_enums() -> None:
    answer = Answer.model_validate({"finding_id": "f1", "stance": "dispute"})
    ruling = Ruling.model_validate({"finding_id": "f2", "ruling": "force_fix", "patch": PATCH})
    evaluation = EvaluateAnswers.model_validate({"evaluations": []})

    assert answer.stance is Stance.DISPUTE
    assert ruling.ruling is RulingKind.FORCE_FIX
    assert ruling.patch == Patch.model_validate(PATCH)
    assert evaluation.new_findings == []


def test_json_input_round_trips() -> None:
    report = ReportFindings.model_validate({"findings": [FINDING]})

    assert ReportFindings.model_validate_json(report.model_dump_json()) == report


# --- tools and their JSON Schemas --------------------------------------------------------


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """The schema `node` stands for: itself, or the definition its local `$ref` points at."""
    ref = node.get("$ref")
    if ref is None:
        return node
    prefix = "#/$defs/"
    assert isinstance(ref, str)
    assert ref.startswith(prefix)
    target = schema["$defs"][ref.removeprefix(prefix)]
    assert isinstance(target, dict)
    return target


def item_schema(schema: dict[str, Any], array_field: str) -> dict[str, Any]:
    prop = schema["properties"][array_field]
    assert prop["type"] == "array"
    return resolve(schema, prop["items"])


def optional_ref(schema: dict[str, Any], prop: dict[str, Any]) -> dict[str, Any]:
    """The object of an `X | None` property."""
    (target,) = [option for option in prop["anyOf"] if option.get("type") != "null"]
    return resolve(schema, target)


def assert_describes(node: dict[str, Any], model: type[BaseModel], *, tests: bool = True) -> None:
    """`node` is the object schema of `model`: its fields (without the tests' own unless
    `tests`, never with the walkthrough no review here asks for), the required ones required."""
    assert node["type"] == "object"
    fields = set(model.model_fields) - {"walkthrough"} - (set() if tests else {"reproduction"})
    assert set(node["properties"]) == fields
    required = {name for name, field in model.model_fields.items() if field.is_required()}
    assert set(node.get("required", [])) == required


def test_tools_are_the_four_debate_tools() -> None:
    assert {str(name) for name in TOOLS} == {
        "report_findings",
        "answer_findings",
        "evaluate_answers",
        "arbitrate",
    }
    assert set(TOOLS) == set(ToolName)


@pytest.mark.parametrize(
    ("name", "model"),
    [
        (ToolName.REPORT_FINDINGS, ReportFindings),
        (ToolName.ANSWER_FINDINGS, AnswerFindings),
        (ToolName.EVALUATE_ANSWERS, EvaluateAnswers),
        (ToolName.ARBITRATE, Arbitrate),
    ],
)
def test_tool_schema_is_derived_from_its_model(name: ToolName, model: type[BaseModel]) -> None:
    spec = TESTED_TOOLS[name]

    assert spec.name == name
    assert spec.description
    assert spec.input_model is model
    assert_describes(spec.input_schema(), model)


def test_the_walkthrough_is_shown_only_when_asked_for_and_as_a_bare_object() -> None:
    plain = toolset()
    described = toolset(frozenset({WALKTHROUGH}))
    both = toolset(frozenset({WALKTHROUGH, REPRODUCTION}))

    assert "walkthrough" not in json.dumps([s.input_schema() for s in plain.values()])
    report = described[ToolName.REPORT_FINDINGS].input_schema()
    # Its shape is told by the one turn that asks for it: the schema every call reads stays
    # a few tokens longer, not a few hundred.
    assert report["properties"]["walkthrough"]["type"] == "object"
    assert "properties" not in report["properties"]["walkthrough"]
    assert "walkthrough" not in report["required"]
    for name in (ToolName.ANSWER_FINDINGS, ToolName.EVALUATE_ANSWERS, ToolName.ARBITRATE):
        assert described[name].input_schema() == plain[name].input_schema()
    assert both[ToolName.REPORT_FINDINGS].tests
    assert "walkthrough" in both[ToolName.REPORT_FINDINGS].input_schema()["properties"]
    with pytest.raises(ValueError, match="no optional field"):
        toolset(frozenset({"diagram"}))


def test_without_tests_to_run_no_tool_asks_for_a_reproduction() -> None:
    shown = json.dumps([spec.input_schema() for spec in TOOLS.values()])
    tested = json.dumps([spec.input_schema() for spec in TESTED_TOOLS.values()])

    assert "reproduction" not in shown
    assert tested.count('"reproduction"') == 3  # a finding, a new finding, an evaluation
    finding = item_schema(TESTED_TOOLS[ToolName.REPORT_FINDINGS].input_schema(), "findings")
    test = optional_ref(
        TESTED_TOOLS[ToolName.REPORT_FINDINGS].input_schema(), finding["properties"]["reproduction"]
    )
    assert_describes(test, Reproduction)


@pytest.mark.parametrize(
    ("name", "required"),
    [
        (ToolName.REPORT_FINDINGS, ["findings"]),
        (ToolName.ANSWER_FINDINGS, ["answers"]),
        (ToolName.EVALUATE_ANSWERS, ["evaluations"]),
        (ToolName.ARBITRATE, ["rulings"]),
    ],
)
def test_tool_schema_required_fields(name: ToolName, required: list[str]) -> None:
    assert TOOLS[name].input_schema()["required"] == required


def test_report_findings_schema() -> None:
    schema = TESTED_TOOLS[ToolName.REPORT_FINDINGS].input_schema()
    finding = item_schema(schema, "findings")

    assert_describes(finding, Finding)
    assert set(finding["required"]) == {"path", "start_line", "end_line", "severity", "claim"}
    severity = resolve(schema, finding["properties"]["severity"])
    assert severity["enum"] == ["blocker", "major", "minor", "nit"]
    assert finding["properties"]["start_line"]["minimum"] == 1
    assert finding["properties"]["end_line"]["minimum"] == 1
    assert finding["properties"]["claim"]["minLength"] == 1
    assert finding["properties"]["claim"]["maxLength"] == 2_000


def test_answer_findings_schema() -> None:
    schema = TOOLS[ToolName.ANSWER_FINDINGS].input_schema()
    answer = item_schema(schema, "answers")

    assert_describes(answer, Answer)
    assert set(answer["required"]) == {"finding_id", "stance"}
    assert resolve(schema, answer["properties"]["stance"])["enum"] == [
        "concede",
        "dispute",
        "irrelevant_test",
        "intended",
    ]
    patch = optional_ref(schema, answer["properties"]["patch"])
    assert_describes(patch, Patch)
    assert set(patch["required"]) == {"path", "start_line", "end_line", "replacement"}
    citation = resolve(schema, answer["properties"]["citations"]["items"])
    assert set(citation["properties"]) == {"quote", "path", "start_line", "end_line"}


def test_evaluate_answers_schema() -> None:
    schema = TESTED_TOOLS[ToolName.EVALUATE_ANSWERS].input_schema()
    evaluation = item_schema(schema, "evaluations")
    new_finding = item_schema(schema, "new_findings")

    assert_describes(new_finding, Finding)
    assert set(evaluation["required"]) == {"finding_id", "decision"}
    assert resolve(schema, evaluation["properties"]["decision"])["enum"] == ["accept", "reject"]
    assert resolve(schema, new_finding["properties"]["severity"])["enum"] == [
        "blocker",
        "major",
        "minor",
        "nit",
    ]


def test_arbitrate_schema() -> None:
    schema = TOOLS[ToolName.ARBITRATE].input_schema()
    ruling = item_schema(schema, "rulings")

    assert_describes(ruling, Ruling)
    assert set(ruling["required"]) == {"finding_id", "ruling"}
    assert resolve(schema, ruling["properties"]["ruling"])["enum"] == [
        "accept_with_warning",
        "force_fix",
        "test_relevant",
        "test_irrelevant",
        "intended",
    ]
    patch = optional_ref(schema, ruling["properties"]["patch"])
    assert_describes(patch, Patch)
    assert patch["properties"]["replacement"]["type"] == "string"
