"""Checks of the agents' tool input against the unit under review, item by item.

Each tool input is a list (or two) of items. Its top level is parsed with a loose model: a
missing field or one that is not a list refuses the whole input (`pydantic.ValidationError`).
Then each item is parsed on its own with its protocol model and checked against the debate's
rules — only the findings the turn asked about, each at most once, every patch adoptable,
every finding on the diff. The items that pass are kept; each one that does not becomes a
:class:`agents.debate.refusals.Refusal` with its reasons, for the agent's next attempt.
"""

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from agents.debate import unit_walkthrough
from agents.debate.intent_rules import Intents
from agents.debate.proofs import Proofs
from agents.debate.refusals import Checked, Refusal, merged
from agents.diff import Diff
from agents.patches import finding_problem, patch_problem
from agents.protocol import (
    Answer,
    AnswerFindings,
    Arbitrate,
    EvaluateAnswers,
    Evaluation,
    Finding,
    ReportFindings,
    Ruling,
)
from policies.safety import ProtectedPaths

M = TypeVar("M", bound=BaseModel)


class _Loose(BaseModel):
    """A tool input's top level: its lists, their items not yet parsed."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class _Report(_Loose):
    findings: list[Any]
    walkthrough: Any = None


class _Answers(_Loose):
    answers: list[Any]


class _Evaluations(_Loose):
    evaluations: list[Any]
    new_findings: list[Any] = []


class _Rulings(_Loose):
    rulings: list[Any]


class _Keyed(_Loose):
    finding_id: str


class InputChecks:
    """Parses and checks the tool inputs of one debate, and holds them to what its findings'
    tests showed (`proofs`)."""

    def __init__(
        self,
        diff: Diff,
        protected: ProtectedPaths,
        proofs: Proofs | None = None,
        *,
        intents: Intents | None = None,
    ) -> None:
        self.diff = diff
        self.protected = protected
        self.proofs = proofs or Proofs()
        self.intents = intents or Intents(diff.changes())

    def report(self, raw: dict[str, Any], asked: Sequence[str] = ()) -> Checked[ReportFindings]:
        shape = _Report.model_validate(raw)
        several = len(shape.findings) > 1
        findings, refused = self._findings("findings", shape.findings, several=several)
        report = ReportFindings(
            findings=findings, walkthrough=unit_walkthrough.parsed(shape.walkthrough)
        )
        return Checked(report, len(findings), merged(refused))

    def answers(self, raw: dict[str, Any], asked: Sequence[str]) -> Checked[AnswerFindings]:
        shape = _Answers.model_validate(raw)
        answers, refused = self._answers(
            "answers", shape.answers, Answer, asked, self._answer_problem
        )
        return Checked(AnswerFindings(answers=answers), len(answers), merged(refused))

    def evaluations(self, raw: dict[str, Any], asked: Sequence[str]) -> Checked[EvaluateAnswers]:
        shape = _Evaluations.model_validate(raw)
        several = len(shape.evaluations) + len(shape.new_findings) > 1
        evaluations, refused = self._answers(
            "evaluations", shape.evaluations, Evaluation, asked, self._evaluation_problem
        )
        findings, unfit = self._findings(
            "new_findings", shape.new_findings, several=several, later=True
        )
        value = EvaluateAnswers(evaluations=evaluations, new_findings=findings)
        return Checked(value, len(evaluations) + len(findings), merged([*refused, *unfit]))

    def rulings(self, raw: dict[str, Any], asked: Sequence[str]) -> Checked[Arbitrate]:
        shape = _Rulings.model_validate(raw)
        rulings, refused = self._answers(
            "rulings", shape.rulings, Ruling, asked, self._ruling_problem
        )
        return Checked(Arbitrate(rulings=rulings), len(rulings), merged(refused))

    def _patch(self, item: Answer | Ruling) -> str | None:
        return patch_problem(item.patch, self.diff, self.protected) if item.patch else None

    def _answer_problem(self, answer: Answer) -> str | None:
        return (
            self._patch(answer)
            or self.proofs.answer_problem(answer)
            or self.intents.answer_problem(answer)
        )

    def _evaluation_problem(self, evaluation: Evaluation) -> str | None:
        intended = evaluation.finding_id in self.intents.answers
        if intended and evaluation.reproduction is None:
            # The coder's latest answer keeps the code: a patch it gave before, which its
            # test rejected, is not what the tester weighs.
            return self.intents.evaluation_problem(evaluation)
        return self.proofs.evaluation_problem(evaluation) or self.intents.evaluation_problem(
            evaluation
        )

    def _ruling_problem(self, ruling: Ruling) -> str | None:
        proven = self.proofs.proven(ruling.finding_id)
        return (
            self._patch(ruling)
            or self.proofs.ruling_problem(ruling)
            or self.intents.ruling_problem(ruling, proven=proven)
        )

    def _answers(
        self,
        field: str,
        items: Sequence[Any],
        model: type[M],
        asked: Sequence[str],
        rule: Callable[[M], str | None],
    ) -> tuple[list[M], list[Refusal]]:
        """The items about one asked finding each that parse and keep `rule`, and a refusal
        for each other item."""
        ids = [_finding_id(item) for item in items]
        kept: list[M] = []
        refused: list[Refusal] = []
        for i, (item, finding_id) in enumerate(zip(items, ids, strict=True)):
            problems = []
            if finding_id is not None and finding_id not in asked:
                listed = ", ".join(asked) or "none"
                problems.append(f"{finding_id} is not one of the findings asked about ({listed})")
            elif finding_id is not None and ids.count(finding_id) > 1:
                problems.append(f"{finding_id} is answered more than once")
            try:
                parsed = model.model_validate(item)
            except ValidationError as exc:
                problems += schema_problems(exc, f"{field}.{i}")
            else:
                if problem := rule(parsed):
                    # Name the item when the reason alone would not say which one it was.
                    problems.append(f"{finding_id}: {problem}" if len(items) > 1 else problem)
                if not problems:
                    kept.append(parsed)
            if problems:
                askable = finding_id if finding_id in asked else None
                refused.append(Refusal(tuple(problems), finding_id=askable))
        return kept, refused

    def _findings(
        self, field: str, items: Sequence[Any], *, several: bool, later: bool = False
    ) -> tuple[list[Finding], list[Refusal]]:
        """The raised findings that parse and lie on the diff (and carry a test, when raised
        `later` than the first report and tests are run), and a refusal for each other."""
        kept: list[Finding] = []
        refused: list[Refusal] = []
        for i, item in enumerate(items):
            try:
                finding = Finding.model_validate(item)
            except ValidationError as exc:
                refused.append(Refusal(tuple(schema_problems(exc, f"{field}.{i}")), finding=item))
                continue
            problem = finding_problem(finding, self.diff)
            if problem is None and later:
                problem = self.proofs.new_finding_problem(finding)
            if problem:
                named = f"{field}.{i}: {problem}" if several else problem
                refused.append(Refusal((named,), finding=item))
            else:
                kept.append(finding)
        return kept, refused


def schema_problems(exc: ValidationError, prefix: str = "") -> list[str]:
    """A schema violation's errors, each located in the tool input (at most ten)."""
    problems = []
    for err in exc.errors(include_url=False, include_input=False)[:10]:
        where = ".".join([*([prefix] if prefix else []), *(str(p) for p in err["loc"])])
        problems.append(f"{where or 'input'}: {err['msg']}")
    return problems


def _finding_id(item: Any) -> str | None:
    """The finding an item says it is about, if it names one."""
    try:
        return _Keyed.model_validate(item).finding_id
    except ValidationError:
        return None
