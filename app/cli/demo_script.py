"""What the agents of `tiebreak demo` answer: a script for the bundled pull request
(`app/demo/`), played by :class:`agents.models.scripted.ScriptedLLM` in place of a model.

The tester raises two findings on `page_count()`: its off-by-one (10 items at 5 a page make 3
pages, so a page past the end is empty) with the test that shows it, and its unchecked
division. The coder concedes the first with a fix and disputes the second twice in the same
words, which ends that edge's budget: the arbiter lets the code stand with a warning. Each
answer is chosen by the tool asked for and the findings the turn is about, so the engine, not
the script, decides who speaks when.
"""

from typing import Any

from agents.models.llm import LLMRequest
from agents.models.scripted import Reply, Script
from agents.protocol import ToolName

DEMO_LABEL = "Demo: scripted agents, no model was called"
"""What every output of `tiebreak demo` is labelled with."""

TEST_COMMAND = "python3 -m unittest {test}"
"""How the bundled project's tests run: the standard library's runner, so that the demo's
tests need nothing installed."""

OFF_BY_ONE, UNCHECKED = "F1", "F2"

TEST_PATH = "test_last_page.py"
TEST = """\
import unittest

from pagination import page


class LastFullPageTest(unittest.TestCase):
    def test_a_page_past_the_end_is_the_last_full_page(self) -> None:
        self.assertEqual(page(list(range(10)), 7, per_page=5), [5, 6, 7, 8, 9])
"""
FIX = {
    "path": "pagination.py",
    "start_line": 11,
    "end_line": 11,
    "replacement": "    return max(1, (total + per_page - 1) // per_page)",
}
DISPUTE = (
    "page_count() is only called from page(), which refuses a per_page below 1 before it "
    "counts anything."
)


def _findings(tests: bool) -> list[dict[str, Any]]:
    off_by_one: dict[str, Any] = {
        "path": "pagination.py",
        "start_line": 11,
        "end_line": 11,
        "severity": "major",
        "claim": "When `total` is a multiple of `per_page`, `total // per_page + 1` counts one "
        "page too many: 10 items at 5 a page make 3 pages, so page 3, and any page past the "
        "end, is empty instead of the last page.",
        "evidence": "page(list(range(10)), 7, per_page=5) clamps to page 3 and returns []; "
        "the base's math.ceil counted 2 pages and returned [5, 6, 7, 8, 9].",
    }
    if tests:
        off_by_one["reproduction"] = {"path": TEST_PATH, "content": TEST}
    unchecked = {
        "path": "pagination.py",
        "start_line": 9,
        "end_line": 11,
        "severity": "minor",
        "claim": "page_count() is a public function now, but it divides by `per_page` "
        "unchecked: page_count(10, 0) raises ZeroDivisionError where page() raises a clear "
        "ValueError.",
        "evidence": "The description says the X-Total-Pages header will call page_count() "
        "directly.",
    }
    return [off_by_one, unchecked]


WALKTHROUGH = {
    "description": "Pages are counted in integers instead of through a float, by a new "
    "page_count() that page() clamps a page past the end with.",
    "files": [
        {"path": "pagination.py", "summary": "page_count() added; page() clamps with it"},
    ],
    "attention": [
        {
            "path": "pagination.py",
            "why": "the count when the items fill their last page exactly",
        }
    ],
    "effort": 1,
}


def _answer(finding_id: str) -> dict[str, Any]:
    if finding_id == OFF_BY_ONE:
        return {
            "finding_id": finding_id,
            "stance": "concede",
            "argument": "Right: the + 1 holds only when the last page is partly full. "
            "Rounding up in integers counts both cases.",
            "patch": FIX,
        }
    return {"finding_id": finding_id, "stance": "dispute", "argument": DISPUTE}


def _evaluation(finding_id: str) -> dict[str, Any]:
    if finding_id == OFF_BY_ONE:
        return {
            "finding_id": finding_id,
            "decision": "accept",
            "reason": "The fix rounds up without a float: 10 items make 2 pages again.",
        }
    return {
        "finding_id": finding_id,
        "decision": "reject",
        "reason": "It is a public name: the header the description speaks of will call it "
        "without page()'s check.",
    }


def _ruling(finding_id: str) -> dict[str, Any]:
    return {
        "finding_id": finding_id,
        "ruling": "accept_with_warning",
        "reasoning": "Every caller goes through page() today, and the header is not written "
        "yet; the precondition must be stated where the next caller will read it.",
        "warning": "page_count() trusts per_page to be at least 1: a caller other than page() "
        "must check it first.",
    }


def demo_script(*, tests: bool) -> Script:
    """The agents' answers on the bundled pull request; `tests`: the findings' tests run,
    so the tester's finding carries its test."""

    def answer(request: LLMRequest) -> Reply:
        about = request.subject
        match request.tool.name:
            case ToolName.REPORT_FINDINGS:
                return {"findings": _findings(tests), "walkthrough": WALKTHROUGH}
            case ToolName.ANSWER_FINDINGS:
                return {"answers": [_answer(f) for f in about]}
            case ToolName.EVALUATE_ANSWERS:
                return {"evaluations": [_evaluation(f) for f in about]}
            case ToolName.ARBITRATE:
                return {"rulings": [_ruling(f) for f in about]}
        raise AssertionError(f"the demo's debate takes no {request.tool.name} turn")

    return answer
