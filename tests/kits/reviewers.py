"""Scripted reviewers for evaluation tests: models that know where each case's bug is.

A script recognises the case under review by its diff in the request. The oracle tester
reports exactly the labelled bugs; the noisy tester adds a false alarm that it withdraws
once the coder disputes it. The coder disputes everything; the arbiter lets disputed code
stand with a warning. No key, no network.
"""

from collections.abc import Sequence
from typing import Any

from agents.diff import Diff
from agents.models.llm import LLMRequest
from agents.models.scripted import Reply, ScriptedLLM
from agents.protocol import ToolName
from app.evaluation.cases import Case

TRUE_SEVERITY, NOISE_SEVERITY = "major", "minor"
"""True findings outrank the noise, so the engine numbers them first (F1, F2, …)."""


def new_file_diff(path: str, lines: int) -> str:
    """A diff adding `path`, `lines` lines long."""
    name = path.rsplit("/", 1)[-1].removesuffix(".py")
    body = "".join(f"+{name}_{n} = compute({n})\n" for n in range(1, lines + 1))
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{lines} @@\n{body}"
    )


def case(
    case_id: str,
    bug: Sequence[tuple[str, Sequence[int]]] = (),
    *,
    paths: Sequence[str] = (),
    lines: int = 40,
    needs_context: bool = False,
) -> Case:
    """A case whose diff adds each of `paths` (those of `bug` by default), bug at `bug`."""
    files = list(dict.fromkeys([*paths, *(p for p, _ in bug)]))
    return Case(
        id=case_id,
        repo="example/shop",
        introducing_commit="a" * 40,
        diff="".join(new_file_diff(p, lines) for p in files),
        bug=tuple({"path": p, "lines": tuple(ls)} for p, ls in bug),
        needs_context=needs_context,
    )


class Reviewers:
    """The script of every role, for a set of cases; `noise` adds the false alarm."""

    def __init__(self, cases: Sequence[Case], *, noise: bool = False) -> None:
        self.cases = cases
        self.noise = noise

    def llm(self) -> ScriptedLLM:
        return ScriptedLLM(self.answer)

    def answer(self, request: LLMRequest) -> Reply:
        under_review = self._case(request)
        match request.tool.name:
            case ToolName.REPORT_FINDINGS:
                return {"findings": self._findings(under_review, request)}
            case ToolName.ANSWER_FINDINGS:
                return {"answers": [_dispute(f) for f in request.subject]}
            case ToolName.EVALUATE_ANSWERS:
                real = self._real_ids(under_review, request)
                return {"evaluations": [_evaluate(f, f in real) for f in request.subject]}
            case ToolName.ARBITRATE:
                return {"rulings": [_warn(f) for f in request.subject]}
        raise AssertionError(f"unexpected {request.role} call")

    def _case(self, request: LLMRequest) -> Case:
        text = request.blocks[0].text
        for candidate in self.cases:
            hunks = [h.text for f in Diff.parse(candidate.diff).files for h in f.hunks]
            if any(h in text for h in hunks):
                return candidate
        raise AssertionError("a request about no known case")

    def _labels(self, under_review: Case, request: LLMRequest) -> list[tuple[str, int]]:
        text = request.blocks[0].text
        return [(b.path, b.lines[0]) for b in under_review.bug if f"+++ b/{b.path}" in text]

    def _findings(self, under_review: Case, request: LLMRequest) -> list[dict[str, Any]]:
        found = [
            _finding(path, line, TRUE_SEVERITY, f"Wrong total computed for item {line}.")
            for path, line in self._labels(under_review, request)
        ]
        if self.noise:
            path = Diff.parse(under_review.diff).files[0].path
            found.append(_finding(path, 38, NOISE_SEVERITY, "Variable shadowing worries me."))
        return found

    def _real_ids(self, under_review: Case, request: LLMRequest) -> set[str]:
        return {f"F{n}" for n in range(1, len(self._labels(under_review, request)) + 1)}


def _finding(path: str, line: int, severity: str, claim: str) -> dict[str, Any]:
    return {
        "path": path,
        "start_line": line,
        "end_line": line,
        "severity": severity,
        "claim": claim,
    }


def _dispute(finding_id: str) -> dict[str, Any]:
    return {"finding_id": finding_id, "stance": "dispute", "argument": "The code is right."}


def _evaluate(finding_id: str, real: bool) -> dict[str, Any]:
    decision = "reject" if real else "accept"
    return {"finding_id": finding_id, "decision": decision, "reason": "Checked again."}


def _warn(finding_id: str) -> dict[str, Any]:
    return {
        "finding_id": finding_id,
        "ruling": "accept_with_warning",
        "reasoning": "Both sides have a point.",
        "warning": "Check the totals by hand.",
    }
