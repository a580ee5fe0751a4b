"""The debate engine's own overhead per model call, over 1,000 scripted debates.

Every debate runs the same realistic conversation over a three-file diff: three findings, a
concession accepted at once, a dispute settled by a second patch, and a stubborn dispute
that drops the budget and goes to the arbiter. The scripted model answers instantly; the
time spent inside it is measured and subtracted, so what is left is the engine: prompt
building, validation, budgets, loop hashing and bookkeeping.

    uv run python -m bench.engine [--debates N]
"""

import argparse
import asyncio
import time
from typing import Any

from agents.debate.engine import Debate
from agents.diff import Diff, ReviewUnit
from agents.models.llm import LLMRequest, LLMResponse
from agents.models.scripted import ScriptedLLM
from agents.protocol import ToolName

GOAL_MS = 1.0


def sample_diff() -> str:
    parts = []
    for n in range(3):
        path = f"service/module_{n}.py"
        body = "".join(f"+    value_{i} = compute({i}, limit={n})\n" for i in range(40))
        parts.append(
            f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1,2 +1,42 @@\n def handler(request):\n{body}     return None\n"
        )
    return "".join(parts)


def conversation(request: LLMRequest) -> dict[str, Any]:
    """The same debate every time, answered from the request alone."""
    tool, ids = request.tool.name, request.subject
    if tool is ToolName.REPORT_FINDINGS:
        return {
            "findings": [
                {
                    "path": f"service/module_{n}.py",
                    "start_line": 10 + n,
                    "end_line": 10 + n,
                    "severity": "major",
                    "claim": f"limit {n} is off by one",
                    "evidence": "see docs",
                }
                for n in range(3)
            ]
        }
    if tool is ToolName.ANSWER_FINDINGS:
        second_round = "F1" not in ids
        answers = []
        for finding_id in ids:
            n = int(finding_id[1:]) - 1
            fix = {
                "path": f"service/module_{n}.py",
                "start_line": 10 + n,
                "end_line": 10 + n,
                "replacement": f"    value_{9 + n} = compute(9, limit=1)",
            }
            if finding_id == "F1" or (finding_id == "F2" and second_round):
                answers.append(
                    {
                        "finding_id": finding_id,
                        "stance": "concede",
                        "argument": "Fixed.",
                        "patch": fix,
                    }
                )
            else:
                answers.append(
                    {
                        "finding_id": finding_id,
                        "stance": "dispute",
                        "argument": "The limit is inclusive by design.",
                    }
                )
        return {"answers": answers}
    if tool is ToolName.EVALUATE_ANSWERS:
        first_round = "F1" in ids
        return {
            "evaluations": [
                {
                    "finding_id": i,
                    "decision": "accept"
                    if i == "F1" or (i == "F2" and not first_round)
                    else "reject",
                    "reason": "The caller passes an exclusive bound.",
                }
                for i in ids
            ]
        }
    return {
        "rulings": [
            {
                "finding_id": i,
                "ruling": "accept_with_warning",
                "reasoning": "Documented.",
                "warning": "The bound is inclusive; callers must pass limit - 1.",
            }
            for i in ids
        ]
    }


class TimedScript:
    def __init__(self) -> None:
        self.seconds = 0.0
        self.llm = ScriptedLLM(conversation)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        start = time.perf_counter()
        try:
            return await self.llm.complete(request)
        finally:
            self.seconds += time.perf_counter() - start


async def run(debates: int, unit: ReviewUnit) -> tuple[float, float, int]:
    script = TimedScript()
    start = time.perf_counter()
    calls = 0
    for _ in range(debates):
        outcome = await Debate(script).run(unit)
        calls += outcome.calls
    return time.perf_counter() - start, script.seconds, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--debates", type=int, default=1_000)
    args = parser.parse_args()
    (unit,) = Diff.parse(sample_diff()).units()
    total, scripted, calls = asyncio.run(run(args.debates, unit))
    overhead_ms = (total - scripted) / calls * 1_000
    print(f"debates:                 {args.debates}")
    print(f"model calls:             {calls} ({calls / args.debates:.1f} per debate)")
    print(f"wall time:               {total:.2f} s (scripted model: {scripted:.2f} s)")
    print(f"engine overhead per call: {overhead_ms:.3f} ms (goal < {GOAL_MS} ms)")


if __name__ == "__main__":
    main()
