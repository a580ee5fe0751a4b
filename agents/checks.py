"""Checks of the agents' tool input against the unit under review.

Each check parses a tool input with its protocol model (a schema violation raises
`pydantic.ValidationError`) and then applies the debate's rules — only the findings the
turn asked about, each at most once, every patch adoptable, every finding on the diff —
raising :class:`TurnRejected` with every problem found, for the agent's next attempt.
"""

from collections.abc import Sequence
from typing import Any

from agents.diff import Diff
from agents.errors import TurnRejected
from agents.patches import finding_problem, patch_problem
from agents.protocol import AnswerFindings, Arbitrate, EvaluateAnswers, Finding, ReportFindings
from policies.safety import ProtectedPaths


class InputChecks:
    """Parses and checks the tool inputs of one debate."""

    def __init__(self, diff: Diff, protected: ProtectedPaths) -> None:
        self.diff = diff
        self.protected = protected

    def report(self, raw: dict[str, Any]) -> ReportFindings:
        result = ReportFindings.model_validate(raw)
        _reject_if(self._finding_problems(result.findings))
        return result

    def answers(self, raw: dict[str, Any], asked: Sequence[str]) -> AnswerFindings:
        result = AnswerFindings.model_validate(raw)
        problems = _id_problems([a.finding_id for a in result.answers], asked)
        problems += [
            p
            for a in result.answers
            if a.patch is not None and (p := patch_problem(a.patch, self.diff, self.protected))
        ]
        _reject_if(problems)
        return result

    def evaluations(self, raw: dict[str, Any], asked: Sequence[str]) -> EvaluateAnswers:
        result = EvaluateAnswers.model_validate(raw)
        problems = _id_problems([e.finding_id for e in result.evaluations], asked)
        _reject_if(problems + self._finding_problems(result.new_findings))
        return result

    def rulings(self, raw: dict[str, Any], asked: Sequence[str]) -> Arbitrate:
        result = Arbitrate.model_validate(raw)
        problems = _id_problems([r.finding_id for r in result.rulings], asked)
        problems += [
            p
            for r in result.rulings
            if r.patch is not None and (p := patch_problem(r.patch, self.diff, self.protected))
        ]
        _reject_if(problems)
        return result

    def _finding_problems(self, findings: Sequence[Finding]) -> list[str]:
        return [p for f in findings if (p := finding_problem(f, self.diff))]


def _id_problems(given: Sequence[str], asked: Sequence[str]) -> list[str]:
    problems = [
        f"{i} is not one of the findings asked about ({', '.join(asked)})"
        for i in given
        if i not in asked
    ]
    duplicates = sorted({i for i in given if given.count(i) > 1})
    return problems + [f"{i} is answered more than once" for i in duplicates]


def _reject_if(problems: list[str]) -> None:
    if problems:
        raise TurnRejected(problems)
