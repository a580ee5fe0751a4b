"""A whole review: every unit debated, concurrently, under one ceiling."""

import pytest

from agents.diff import Diff
from agents.errors import LLMFatal
from agents.models.llm import LLMRequest, LLMResponse, Role, Usage
from agents.models.scripted import Reply, ScriptedLLM
from agents.outcome import Resolution, StopReason
from agents.protocol import ToolName
from agents.review import review_diff
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from tests.scenarios.debates import git_diff

FILES = {
    f"pkg/mod{n}.py": ("def f():\n    return 0\n", f"def f():\n    return {n} / 0\n")
    for n in range(3)
}
DIFF = Diff.parse(git_diff(FILES))


def one_finding_per_file(request: LLMRequest) -> Reply:
    """Each unit's tester flags its file's division; the coder fixes it; the tester agrees."""
    unit_text = request.blocks[0].text
    path = next(p for p in FILES if p in unit_text)
    match request.tool.name:
        case ToolName.REPORT_FINDINGS:
            return {
                "findings": [
                    {
                        "path": path,
                        "start_line": 2,
                        "end_line": 2,
                        "severity": "blocker",
                        "claim": "Division by zero.",
                    }
                ]
            }
        case ToolName.ANSWER_FINDINGS:
            return {
                "answers": [
                    {
                        "finding_id": "F1",
                        "stance": "concede",
                        "argument": "Yes.",
                        "patch": {
                            "path": path,
                            "start_line": 2,
                            "end_line": 2,
                            "replacement": "    return 0",
                        },
                    }
                ]
            }
        case _:
            return {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "Ok."}]}


async def test_every_unit_is_debated_and_the_totals_add_up() -> None:
    llm = ScriptedLLM(one_finding_per_file)

    review = await review_diff(DIFF, llm, unit_tokens=40)

    assert len(review.units) == 3
    assert sorted(f.finding.path for f in review.findings) == sorted(FILES)
    assert all(f.resolution is Resolution.FIXED for f in review.findings)
    assert review.settled
    assert review.calls == len(llm.requests) == 9
    assert review.usage.billed == sum(u.usage.billed for u in review.units)
    assert sum(u.billed for u in review.usage_by_role().values()) == review.usage.billed


async def test_a_unit_the_tester_cannot_review_leaves_the_review_unsettled() -> None:
    def broken_for_mod1(request: LLMRequest) -> Reply:
        if "pkg/mod1.py" in request.blocks[0].text:
            return {"findings": "garbage"}
        return one_finding_per_file(request)

    review = await review_diff(DIFF, ScriptedLLM(broken_for_mod1), unit_tokens=40)

    assert [u.stop for u in review.failed_units] == [StopReason.SEED_FAILED]
    assert not review.unresolved
    assert not review.settled


async def test_the_units_share_one_ceiling() -> None:
    policy = DebatePolicy(token_ceiling=12_500)

    review = await review_diff(DIFF, ScriptedLLM(one_finding_per_file), policy, unit_tokens=40)

    assert review.usage.billed <= policy.token_ceiling
    assert any(u.stop is StopReason.CEILING for u in review.units)


async def test_a_fatal_model_error_ends_the_whole_review() -> None:
    def revoked(request: LLMRequest) -> Reply:
        if "pkg/mod2.py" in request.blocks[0].text:
            return LLMFatal("invalid x-api-key")
        return one_finding_per_file(request)

    with pytest.raises(LLMFatal, match="invalid x-api-key"):
        await review_diff(DIFF, ScriptedLLM(revoked), unit_tokens=40)


async def test_the_billed_total_adds_up_each_calls_bill_as_the_ceiling_counts() -> None:
    """A cache read's tenth is rounded up per call, where the ceiling and the progress count
    it: the review's total is theirs, not the bill of its summed usage, which is lower."""

    def cached(request: LLMRequest) -> LLMResponse:
        reply = one_finding_per_file(request)
        return LLMResponse(
            tool_input=reply, usage=Usage(input_tokens=100, cache_read_input_tokens=5)
        )

    ceiling = TokenCeiling(DebatePolicy().token_ceiling)
    review = await review_diff(DIFF, ScriptedLLM(cached), unit_tokens=40, ceiling=ceiling)

    assert review.calls == 9
    assert review.billed == ceiling.spent == 9 * 101
    assert review.billed_by_role() == {Role.TESTER: 6 * 101, Role.CODER: 3 * 101}
