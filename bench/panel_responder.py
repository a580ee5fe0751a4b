"""How the fake Messages API answers the panel scenario (`bench.panel_tokens`): from each
request alone, by the courses of `bench.panel_courses`, so that a ring and a full panel are
answered alike; and the readers of a request's text and data blocks, which its figures use too.
"""

import json
import re
from collections.abc import Sequence
from typing import Any

from agents.debate.prompts import FOCUS
from agents.protocol import ToolName
from bench.panel_courses import Course
from policies.panel import Focus
from tests.fakes.messages_api import Body, Unscripted, forced_tool

_DATA = re.compile(r"<untrusted-(\w+)-([0-9a-f]{16})>\n(.*?)\n</untrusted-\1-\2>", re.DOTALL)


class PanelResponder:
    """Answers every call of the scenario from the request body alone, by the courses' rules,
    so that a ring and a full panel are answered alike: a tester reports its focus's findings
    and votes on each answer it is shown as the course says; the coder gives each open
    finding its next answer."""

    def __init__(self, plan: Sequence[Course]) -> None:
        self.plan = tuple(plan)
        self.by_claim = {course.claim: course for course in plan}

    def __call__(self, body: Body) -> dict[str, Any]:
        tool = forced_tool(body)
        text = user_text(body)
        if tool == ToolName.REPORT_FINDINGS:
            focus = _focus(text)
            return {"findings": [c.finding for c in self.plan if c.raiser is focus]}
        if tool == ToolName.ANSWER_FINDINGS:
            shown = data(text, "findings")["open_findings"]
            return {"answers": [self._answer(entry) for entry in shown]}
        if tool == ToolName.EVALUATE_ANSWERS:
            focus = _focus(text)
            return {"evaluations": [self._vote(entry, focus) for entry in data(text, "answers")]}
        raise Unscripted(f"the scenario makes no {tool} call")

    def _answer(self, entry: dict[str, Any]) -> dict[str, Any]:
        course = self._course(entry["finding"])
        last = entry.get("your_last_answer")
        index = 0 if last is None else self._exchange(course, last["argument"]) + 1
        if index >= len(course.exchanges):
            raise Unscripted(f"{entry['finding']['id']} has no answer for exchange {index + 1}")
        exchange = course.exchanges[index]
        answer: dict[str, Any] = {
            "finding_id": entry["finding"]["id"],
            "stance": "dispute" if exchange.patch is None else "concede",
            "argument": exchange.argument,
        }
        if exchange.patch is not None:
            answer["patch"] = exchange.patch
        return answer

    def _vote(self, entry: dict[str, Any], focus: Focus) -> dict[str, Any]:
        course = self._course(entry["finding"])
        exchange = course.exchanges[self._exchange(course, entry["coder_answer"]["argument"])]
        reason = exchange.kept.get(focus)
        return {
            "finding_id": entry["finding"]["id"],
            "decision": "accept" if reason is None else "reject",
            "reason": exchange.accepted if reason is None else reason,
        }

    def _course(self, finding: dict[str, Any]) -> Course:
        course = self.by_claim.get(finding["claim"])
        if course is None:
            raise Unscripted(f"no course raises {finding['claim']!r}")
        return course

    @staticmethod
    def _exchange(course: Course, argument: str) -> int:
        for i, exchange in enumerate(course.exchanges):
            if exchange.argument == argument:
                return i
        raise Unscripted(f"the coder never answers {course.claim!r} with {argument!r}")


def user_text(body: Body) -> str:
    """The text of the request's user message: the role brief and the turn."""
    return "\n".join(
        block["text"]
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    )


def _focus(text: str) -> Focus:
    """The focus the request's role brief gives its tester."""
    named = [f for f, says in FOCUS.items() if f"Your focus is {says}." in text]
    if len(named) != 1:
        raise Unscripted(f"the request names {len(named)} focuses")
    return named[0]


def data(text: str, kind: str) -> Any:
    """The JSON of the request's one `<untrusted-{kind}-…>` block."""
    blocks = [m.group(3) for m in _DATA.finditer(text) if m.group(1) == kind]
    if len(blocks) != 1:
        raise Unscripted(f"the request has {len(blocks)} {kind} blocks")
    return json.loads(blocks[0])
