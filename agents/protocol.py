"""The debate protocol: the tools the agents call, as pydantic models.

This is a contract shared by the engine, the LLM clients, recorded transcripts and the
benchmarks: fields may be added (optional), never renamed or removed. The JSON Schemas the
models are given are derived from these classes (:data:`TOOLS`), never written by hand.

Line numbers are new-file (RIGHT side) line numbers of the pull request head.
"""

import functools
import json
from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

Text = Annotated[str, StringConstraints(max_length=8_000)]
Line = Annotated[int, Field(ge=1)]


class Severity(StrEnum):
    BLOCKER = "blocker"
    MAJOR = "major"
    MINOR = "minor"
    NIT = "nit"

    @property
    def rank(self) -> int:
        """0 for the most severe."""
        return list(Severity).index(self)


class Stance(StrEnum):
    CONCEDE = "concede"
    DISPUTE = "dispute"
    IRRELEVANT_TEST = "irrelevant_test"
    """A proven finding's test does not exercise its claim (`agents.debate.relevance`)."""
    INTENDED = "intended"
    """The behaviour the finding shows is what the pull request means to do, as its cited
    evidence shows (`agents.debate.intent_rules`)."""


class Decision(StrEnum):
    ACCEPT = "accept"
    REJECT = "reject"


class RulingKind(StrEnum):
    ACCEPT_WITH_WARNING = "accept_with_warning"
    FORCE_FIX = "force_fix"
    TEST_RELEVANT = "test_relevant"
    """A disputed test exercises its finding's claim: the proof binds, the fix is forced."""
    TEST_IRRELEVANT = "test_irrelevant"
    """A disputed test does not exercise its claim: it is no proof, and the finding is ruled
    as an opinion, with a forced fix or a warning (`agents.debate.relevance`)."""
    INTENDED = "intended"
    """The proven change of behaviour is the one the pull request means to make."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class _Span(_Model):
    path: Annotated[str, StringConstraints(min_length=1, max_length=1_000)]
    start_line: Line
    end_line: Line

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.start_line > self.end_line:
            raise ValueError("start_line must not be after end_line")
        return self


class Patch(_Span):
    """The full new text of lines start_line..end_line of `path`."""

    replacement: Annotated[str, StringConstraints(max_length=40_000)]


class Reproduction(_Model):
    """A test file that shows a finding's bug: it should fail at the pull request's head and
    pass at its base. `path` is a new file in the repository (beside the project's own
    tests), `content` its full text."""

    path: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    content: Annotated[str, StringConstraints(min_length=1, max_length=40_000)]


class Finding(_Span):
    """A problem the tester sees in the diff."""

    id: Annotated[str, StringConstraints(max_length=64)] = ""
    severity: Severity
    claim: Annotated[str, StringConstraints(min_length=1, max_length=2_000)]
    evidence: Text = ""
    reproduction: Reproduction | None = None
    """A test that shows the bug, when one can; Tiebreak runs it at the base and the head."""


class Citation(_Model):
    """Evidence in the pull request that a change of behaviour is intended: a phrase quoted
    word for word from its title or description (`quote`), or lines of a file its diff adds
    or changes (`path`, `start_line`..`end_line`: a changelog, docs, a docstring, a test)."""

    quote: Annotated[str, StringConstraints(max_length=500)] | None = None
    path: Annotated[str, StringConstraints(max_length=1_000)] | None = None
    start_line: Line | None = None
    end_line: Line | None = None


class Answer(_Model):
    """The coder's answer to one finding: a concession with a patch, a dispute, or the
    behaviour shown to be intended, with the pull request's evidence of it (`citations`)."""

    finding_id: str
    stance: Stance
    argument: Text = ""
    patch: Patch | None = None
    citations: Annotated[list[Citation], Field(max_length=10)] = []
    """Only with `intended`: where the pull request shows the new behaviour is meant."""

    @model_validator(mode="after")
    def _concession_has_patch(self) -> Self:
        if self.stance is Stance.CONCEDE and self.patch is None:
            raise ValueError(f"conceding {self.finding_id} needs a patch")
        if self.stance is Stance.IRRELEVANT_TEST and not self.argument.strip():
            raise ValueError(
                f"irrelevant_test on {self.finding_id} needs an argument: how its test fails "
                "to exercise the claim"
            )
        return self


class Evaluation(_Model):
    """The tester's verdict on the coder's answer to one finding."""

    # Also the tester's word on its own finding when the finding's test passed at the head:
    # accept withdraws it, reject keeps it with a new `reproduction` (`agents.debate.proofs`).

    finding_id: str
    decision: Decision
    reason: Text = ""
    reproduction: Reproduction | None = None
    """Another test for the finding, when its last one did not reproduce the bug."""
    learning: Text | None = None
    """Only when accepting a person's reply on a finding's thread: what the reply taught about
    this repository, as one rule in plain words for later reviews of these files (one
    sentence or two, at most 300 characters), if it teaches one."""


class Ruling(_Model):
    """The arbiter's binding ruling on one disputed finding."""

    finding_id: str
    ruling: RulingKind
    reasoning: Text = ""
    warning: Text | None = None
    patch: Patch | None = None

    @model_validator(mode="after")
    def _ruling_is_complete(self) -> Self:
        if self.ruling is RulingKind.FORCE_FIX and self.patch is None:
            raise ValueError(f"force_fix on {self.finding_id} needs a patch")
        if self.ruling is RulingKind.ACCEPT_WITH_WARNING and not self.warning:
            raise ValueError(f"accept_with_warning on {self.finding_id} needs a warning")
        if self.ruling is RulingKind.TEST_RELEVANT and self.patch is None:
            raise ValueError(f"test_relevant on {self.finding_id} needs a patch")
        if self.ruling is RulingKind.TEST_IRRELEVANT and (self.patch is None) == (not self.warning):
            raise ValueError(f"test_irrelevant on {self.finding_id} needs a patch or a warning")
        return self


class FileLine(_Model):
    """What the change does to one file, in one line."""

    path: Annotated[str, StringConstraints(min_length=1, max_length=1_000)]
    summary: Annotated[str, StringConstraints(max_length=500)]


class AttentionArea(_Model):
    """A place in the change a person should read closely, and why."""

    path: Annotated[str, StringConstraints(min_length=1, max_length=1_000)]
    why: Annotated[str, StringConstraints(min_length=1, max_length=500)]


class UnitWalkthrough(_Model):
    """A unit's walkthrough: what its part of the change does, for the people who review it;
    the units' are merged into the review's (:mod:`agents.walkthrough`)."""

    description: Annotated[str, StringConstraints(max_length=2_000)]
    files: list[FileLine] = []
    attention: list[AttentionArea] = []
    effort: Annotated[int, Field(ge=1, le=5)] | None = None
    """How much effort a careful human review of the change takes, 1 (trivial) to 5."""
    diagram: Annotated[str, StringConstraints(max_length=4_000)] | None = None
    """A Mermaid sequence diagram of a call flow the change alters, when one was asked for."""


_ASKED_IN_THE_TURN = {
    "type": "object",
    "description": "Only when the turn asks for it, as it says.",
}


class ReportFindings(_Model):
    findings: list[Finding]
    walkthrough: Annotated[UnitWalkthrough | None, WithJsonSchema(_ASKED_IN_THE_TURN)] = None
    """Asked of a unit's first tester only, when the repository wants a walkthrough: it reads
    the diff then, so the walkthrough costs only the answer (`agents.debate.unit_walkthrough`).
    Its shape is told in the turn that asks for it: a schema would be read again by every call
    of the unit, for the one that writes it."""


class AnswerFindings(_Model):
    answers: list[Answer]


class EvaluateAnswers(_Model):
    evaluations: list[Evaluation]
    new_findings: list[Finding] = []


class Arbitrate(_Model):
    rulings: list[Ruling]


class ToolName(StrEnum):
    REPORT_FINDINGS = "report_findings"
    ANSWER_FINDINGS = "answer_findings"
    EVALUATE_ANSWERS = "evaluate_answers"
    ARBITRATE = "arbitrate"


class ToolSpec(BaseModel):
    """A tool as the model sees it: name, description and JSON Schema of its input."""

    model_config = ConfigDict(frozen=True)

    name: ToolName
    description: str
    input_model: type[_Model]
    shows: frozenset[str] = frozenset()
    """The :data:`OPTIONAL_FIELDS` the schema shows: a field the review has no use for is
    left out, so that no model writes what nothing would read (tests nothing would run, a
    walkthrough no one asked for) and no request pays for its schema."""

    @property
    def tests(self) -> bool:
        """Whether findings' tests are run (the schema shows `reproduction`)."""
        return REPRODUCTION in self.shows

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's input, self-contained and without titles."""
        return _compact_schema(self.input_model, OPTIONAL_FIELDS - self.shows)


REPRODUCTION, WALKTHROUGH = "reproduction", "walkthrough"
OPTIONAL_FIELDS = frozenset({REPRODUCTION, WALKTHROUGH})
"""Fields shown only when a review uses them: a finding's test when tests are run, the report's
walkthrough when the repository's summary asks for one. No other field of the protocol bears
these names."""


def shown(*, tests: bool, walkthrough: bool) -> frozenset[str]:
    """The optional fields a review uses: a finding's test when tests are run, the report's
    walkthrough when one is asked for."""
    return frozenset({REPRODUCTION} if tests else set()) | ({WALKTHROUGH} if walkthrough else set())


TOOLS: dict[ToolName, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            name=ToolName.REPORT_FINDINGS,
            description="Report the findings you raise on the diff.",
            input_model=ReportFindings,
        ),
        ToolSpec(
            name=ToolName.ANSWER_FINDINGS,
            description=(
                "Answer each open finding: concede it with a patch, dispute it, or show the "
                "behaviour it shows is intended, citing the pull request."
            ),
            input_model=AnswerFindings,
        ),
        ToolSpec(
            name=ToolName.EVALUATE_ANSWERS,
            description="Accept or reject each answer; optionally raise new findings.",
            input_model=EvaluateAnswers,
        ),
        ToolSpec(
            name=ToolName.ARBITRATE,
            description="Rule bindingly on each disputed finding.",
            input_model=Arbitrate,
        ),
    )
}
"""The four tools as a review without tests or walkthrough shows them."""


@functools.cache
def toolset(shows: frozenset[str] = frozenset()) -> dict[ToolName, ToolSpec]:
    """The four tools as a review shows them, with the optional fields it uses: every request
    of a review offers the same ones (they open the cached prefix)."""
    unknown = shows - OPTIONAL_FIELDS
    if unknown:
        raise ValueError(f"no optional field {sorted(unknown)}")
    return {name: spec.model_copy(update={"shows": shows}) for name, spec in TOOLS.items()}


TESTED_TOOLS = toolset(frozenset({REPRODUCTION}))
"""The tools when findings' tests are run: with the `reproduction` fields."""


@functools.cache
def _schema(model: type[_Model], hidden: frozenset[str]) -> dict[str, Any]:
    raw = model.model_json_schema()
    definitions = raw.pop("$defs", {})

    def inline(node: Any, naming_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [inline(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return inline(definitions[node["$ref"].rsplit("/", 1)[-1]])
        # In a `properties` mapping the keys are field names (one may be `title`): the hidden
        # fields go; elsewhere, the titles pydantic adds.
        dropped = hidden if naming_properties else {"title"}
        return {
            key: inline(value, naming_properties=key == "properties" and not naming_properties)
            for key, value in node.items()
            if key not in dropped
        }

    result: dict[str, Any] = inline(raw)
    return result


def _compact_schema(model: type[_Model], hidden: frozenset[str]) -> dict[str, Any]:
    # A deep copy per call: callers may change it; the cache keeps the derivation to once.
    copy: dict[str, Any] = json.loads(json.dumps(_schema(model, hidden)))
    return copy
