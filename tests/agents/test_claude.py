"""The Anthropic client over the real SDK, faked only at the HTTP boundary (respx)."""

import json
from typing import Any

import httpx
import pytest
import respx

from agents.debate.engine import Debate
from agents.debate.prompts import SYSTEM
from agents.errors import LLMFatal, LLMUnavailable
from agents.models.claude import ClaudeLLM, RoleModels
from agents.models.llm import LLMRequest, PromptBlock, Role
from agents.outcome import Resolution
from agents.protocol import TOOLS, ToolName
from policies.budget import BudgetEventKind
from policies.debate import DebatePolicy
from tests.kits.messages import (
    BASE_URL,
    MESSAGES_URL,
    by_tool,
    error,
    forced_tool,
    message,
)
from tests.scenarios.debates import LOG_FIX, UNDEFINED, payments_unit

DIFF_BLOCK = PromptBlock(text="<untrusted-diff-1>…</untrusted-diff-1>", stable=True)


def request(role: Role = Role.CODER, tool: ToolName = ToolName.ANSWER_FINDINGS) -> LLMRequest:
    return LLMRequest(
        role=role,
        agent=str(role),
        tool=TOOLS[tool],
        system=SYSTEM,
        blocks=(
            DIFF_BLOCK,
            PromptBlock(text=f"You are the {role} for this turn."),
            PromptBlock(text="the open findings"),
        ),
        max_output_tokens=2048,
    )


def client(**options: Any) -> ClaudeLLM:
    options.setdefault("max_retries", 0)
    return ClaudeLLM.connect(api_key="sk-test", base_url=BASE_URL, **options)


def sent(route: respx.Route, index: int = -1) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls[index].request.content)
    return body


@respx.mock
async def test_a_request_forces_the_tool_and_lays_out_a_cacheable_prefix() -> None:
    route = respx.post(MESSAGES_URL).mock(return_value=message("answer_findings", {"answers": []}))
    models = RoleModels(tester="claude-haiku-5-5", coder="claude-sonnet-5-5", arbiter="m-a")

    await client(models=models).complete(request())

    body = sent(route)
    assert body["model"] == "claude-sonnet-5-5"
    assert body["max_tokens"] == 2048
    assert body["tool_choice"] == {"type": "tool", "name": "answer_findings"}
    assert [t["name"] for t in body["tools"]] == [str(name) for name in TOOLS]
    assert body["tools"][1]["input_schema"] == TOOLS[ToolName.ANSWER_FINDINGS].input_schema()
    # The prompt every review shares, then the unit's diff: a cache breakpoint after each.
    assert [b["text"] for b in body["system"]] == [SYSTEM, DIFF_BLOCK.text]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "You are the coder for this turn."},
                {"type": "text", "text": "the open findings"},
            ],
        }
    ]
    assert "temperature" not in body
    headers = route.calls.last.request.headers
    assert headers["authorization"] == "Bearer sk-test"


@respx.mock
async def test_every_role_shares_the_same_cacheable_prefix() -> None:
    route = respx.post(MESSAGES_URL).mock(return_value=message("report_findings", {"findings": []}))
    llm = client()

    for role, tool in [
        (Role.TESTER, ToolName.REPORT_FINDINGS),
        (Role.CODER, ToolName.ANSWER_FINDINGS),
        (Role.TESTER, ToolName.EVALUATE_ANSWERS),
        (Role.ARBITER, ToolName.ARBITRATE),
    ]:
        await llm.complete(request(role, tool))

    prefixes = {json.dumps([sent(route, i)["tools"], sent(route, i)["system"]]) for i in range(4)}
    assert len(prefixes) == 1


@respx.mock
async def test_caching_can_be_turned_off() -> None:
    route = respx.post(MESSAGES_URL).mock(return_value=message("answer_findings", {"answers": []}))

    await client(cache=False).complete(request())

    assert "cache_control" not in json.dumps(sent(route))


@respx.mock
async def test_usage_and_the_tool_input_come_back() -> None:
    respx.post(MESSAGES_URL).mock(
        return_value=message(
            "answer_findings",
            {"answers": []},
            input_tokens=40,
            output_tokens=90,
            cache_creation=3000,
            cache_read=500,
        )
    )

    response = await client().complete(request())

    assert response.tool_input == {"answers": []}
    assert (response.usage.input_tokens, response.usage.output_tokens) == (40, 90)
    assert response.usage.cache_creation_input_tokens == 3000
    assert response.usage.cache_read_input_tokens == 500
    assert response.usage.total == 3630
    # Billed in input-token equivalents: a write costs 1.25, a read a tenth.
    assert response.usage.billed == 40 + 90 + 3750 + 50
    assert not response.truncated


@respx.mock
async def test_an_answer_cut_at_the_output_limit_is_marked_truncated() -> None:
    respx.post(MESSAGES_URL).mock(
        return_value=message("answer_findings", {"answers": []}, stop_reason="max_tokens")
    )

    response = await client().complete(request())

    assert response.truncated


@respx.mock
async def test_a_text_answer_without_the_tool_has_no_tool_input() -> None:
    body = message("answer_findings", {}).json()
    body["content"] = [{"type": "text", "text": "I would rather chat."}]
    body["stop_reason"] = "end_turn"
    respx.post(MESSAGES_URL).mock(return_value=httpx.Response(200, json=body))

    response = await client().complete(request())

    assert response.tool_input is None


@pytest.mark.parametrize(
    ("status", "kind", "text"),
    [
        (401, "authentication_error", "invalid x-api-key"),
        (403, "permission_error", "no access to this model"),
        (402, "billing_error", "your credit balance is too low"),
        (404, "not_found_error", "model: claude-nope"),
    ],
)
@respx.mock
async def test_errors_no_call_can_survive_stop_the_review(
    status: int, kind: str, text: str
) -> None:
    respx.post(MESSAGES_URL).mock(return_value=error(status, kind, text))

    with pytest.raises(LLMFatal, match=text):
        await client().complete(request())


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (error(529, "overloaded_error", "Overloaded"), "Overloaded"),
        (error(429, "rate_limit_error", "slow down"), "slow down"),
        (error(500, "api_error", "internal"), "internal"),
        (error(400, "invalid_request_error", "prompt is too long"), "prompt is too long"),
    ],
)
@respx.mock
async def test_other_failures_are_one_unavailable_call(
    response: httpx.Response, reason: str
) -> None:
    respx.post(MESSAGES_URL).mock(return_value=response)

    with pytest.raises(LLMUnavailable, match=reason):
        await client().complete(request())


@respx.mock
async def test_a_connection_failure_is_one_unavailable_call() -> None:
    respx.post(MESSAGES_URL).mock(side_effect=httpx.ConnectError("refused"))

    with pytest.raises(LLMUnavailable, match="no answer"):
        await client().complete(request())


@respx.mock
async def test_a_call_a_test_s_script_did_not_foresee_is_asked_once_and_unavailable() -> None:
    """With Tiebreak's own retries: the scripted API's refusal is not one the SDK retries."""
    route = respx.post(MESSAGES_URL).mock(side_effect=by_tool(report_findings=[]))

    with pytest.raises(LLMUnavailable, match="unexpected call of answer_findings"):
        await client(max_retries=4).complete(request())

    assert route.call_count == 1


@respx.mock
async def test_overload_and_rate_limits_are_retried_by_the_sdk() -> None:
    route = respx.post(MESSAGES_URL).mock(
        side_effect=[
            error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "1"}),
            error(429, "rate_limit_error", "slow down", **{"retry-after-ms": "1"}),
            message("answer_findings", {"answers": []}),
        ]
    )

    response = await client(max_retries=2).complete(request())

    assert response.tool_input == {"answers": []}
    assert route.call_count == 3


@pytest.mark.timeout(20)
@respx.mock
async def test_a_long_retry_after_is_capped() -> None:
    # Uncapped, the SDK would sleep an hour here and the test would time out.
    route = respx.post(MESSAGES_URL).mock(
        side_effect=[
            error(429, "rate_limit_error", "slow down", **{"retry-after": "3600"}),
            error(429, "rate_limit_error", "slow down", **{"retry-after-ms": "3600000"}),
            message("answer_findings", {"answers": []}),
        ]
    )

    response = await client(max_retries=2, max_retry_after=0.01).complete(request())

    assert response.tool_input == {"answers": []}
    assert route.call_count == 3


@respx.mock
async def test_real_usage_flows_into_the_debate_budgets() -> None:
    route = respx.post(MESSAGES_URL).mock(
        side_effect=by_tool(
            report_findings=[{"findings": [UNDEFINED]}],
            answer_findings=[
                {
                    "answers": [
                        {
                            "finding_id": "F1",
                            "stance": "concede",
                            "argument": "Yes.",
                            "patch": LOG_FIX,
                        }
                    ]
                }
            ],
            evaluate_answers=[
                {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "Fixed."}]}
            ],
        )
    )

    outcome = await Debate(client()).run(payments_unit())

    assert [f.resolution for f in outcome.findings] == [Resolution.FIXED]
    spends = [e for e in outcome.budget_history["coder↔tester"] if e.kind is BudgetEventKind.SPEND]
    # Each call reported 1200 input and 80 output tokens.
    assert [e.spent for e in spends] == [1280, 2560, 3840]
    assert route.call_count == 3


@respx.mock
async def test_cached_reads_spend_a_tenth_of_the_budget() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        tool_input = (
            {"findings": [UNDEFINED]}
            if forced_tool(request) == "report_findings"
            else (
                {
                    "answers": [
                        {
                            "finding_id": "F1",
                            "stance": "concede",
                            "argument": "Yes.",
                            "patch": LOG_FIX,
                        }
                    ]
                }
                if forced_tool(request) == "answer_findings"
                else {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "Ok."}]}
            )
        )
        return message(
            forced_tool(request), tool_input, input_tokens=100, output_tokens=50, cache_read=10_000
        )

    respx.post(MESSAGES_URL).mock(side_effect=answer)

    outcome = await Debate(client()).run(payments_unit())

    spends = [e for e in outcome.budget_history["coder↔tester"] if e.kind is BudgetEventKind.SPEND]
    assert [e.spent for e in spends] == [1150, 2300, 3450]


@respx.mock
async def test_schema_violating_tool_input_is_a_failed_turn_not_a_crash() -> None:
    respx.post(MESSAGES_URL).mock(
        side_effect=by_tool(
            report_findings=[{"findings": [{"path": 7}]}, {"findings": []}],
        )
    )

    outcome = await Debate(client(), DebatePolicy()).run(payments_unit())

    first, second = outcome.transcript.turns
    assert first.error is not None
    assert "findings.0" in first.error
    assert second.error is None
    assert outcome.findings == []


FIX_ANSWER = {
    "answers": [{"finding_id": "F1", "stance": "concede", "argument": "Yes.", "patch": LOG_FIX}]
}
FIX_ACCEPTED = {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "Fixed."}]}

THINKING_REFUSAL = error(
    400,
    "invalid_request_error",
    "Thinking may not be enabled when tool_choice forces tool use.",
)


def always_thinking(*content: dict[str, Any]) -> Any:
    """A model that always thinks: a forced tool is refused; asked, it answers `content`."""

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body["tool_choice"]["type"] in ("tool", "any"):
            return THINKING_REFUSAL
        reply = message("report_findings", {"findings": []}, output_tokens=300)
        return httpx.Response(200, json=json.loads(reply.content) | {"content": list(content)})

    return answer


THOUGHT = {"type": "thinking", "thinking": "The diff looks fine.", "signature": "sig"}


def tool_use(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_01", "name": name, "input": tool_input}


@respx.mock
async def test_a_model_that_refuses_forced_tools_is_asked_for_the_tool_instead() -> None:
    route = respx.post(MESSAGES_URL).mock(
        side_effect=always_thinking(THOUGHT, tool_use("answer_findings", {"answers": []}))
    )
    llm = client()

    first = await llm.complete(request())
    # The same model, chosen by the request (as a repository's config chooses it).
    second = await llm.complete(request().model_copy(update={"model": RoleModels().coder}))

    assert first.tool_input == second.tool_input == {"answers": []}
    assert first.usage.output_tokens == 300
    # The refusal is paid once per model: later calls, whoever chose the model, ask at once.
    assert [sent(route, i)["tool_choice"] for i in range(3)] == [
        {"type": "tool", "name": "answer_findings"},
        {"type": "auto"},
        {"type": "auto"},
    ]
    asked = sent(route, 1)
    forced = sent(route, 0)
    # The cached prefix (tools, then system) is the one a forced call sends.
    assert asked["tools"] == forced["tools"]
    assert asked["system"] == forced["system"]
    assert asked["messages"][0]["content"][:-1] == forced["messages"][0]["content"]
    assert "`answer_findings` tool" in asked["messages"][0]["content"][-1]["text"]


@pytest.mark.parametrize(
    "content",
    [
        [THOUGHT, {"type": "text", "text": "No findings, I think."}],
        [THOUGHT, tool_use("report_findings", {"findings": []})],
    ],
    ids=["words only", "another tool"],
)
@respx.mock
async def test_an_asked_model_that_does_not_call_the_turns_tool_gave_no_answer(
    content: list[dict[str, Any]],
) -> None:
    respx.post(MESSAGES_URL).mock(side_effect=always_thinking(*content))

    answer = await client().complete(request())

    assert answer.tool_input is None


@respx.mock
async def test_another_bad_request_is_not_taken_for_a_thinking_model() -> None:
    route = respx.post(MESSAGES_URL).mock(
        return_value=error(400, "invalid_request_error", "max_tokens: too large")
    )

    with pytest.raises(LLMUnavailable, match="max_tokens: too large"):
        await client().complete(request())
    assert route.call_count == 1


@respx.mock
async def test_a_debate_runs_to_a_fix_on_a_model_that_always_thinks() -> None:
    queues = {
        "report_findings": [{"findings": [UNDEFINED]}],
        "answer_findings": [FIX_ANSWER],
        "evaluate_answers": [FIX_ACCEPTED],
    }

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body["tool_choice"]["type"] == "tool":
            return THINKING_REFUSAL
        # It calls the tool the turn asks for, as a model reads it.
        tool = body["messages"][0]["content"][-1]["text"].split("`")[1]
        return message(tool, queues[tool].pop(0))

    route = respx.post(MESSAGES_URL).mock(side_effect=answer)

    outcome = await Debate(client()).run(payments_unit())

    assert [f.resolution for f in outcome.findings] == [Resolution.FIXED]
    assert route.call_count == 4  # one refusal, then three asked calls


@respx.mock
async def test_a_model_the_request_names_is_the_one_asked() -> None:
    route = respx.post(MESSAGES_URL).mock(
        side_effect=by_tool(answer_findings=[{"answers": []}] * 2)
    )
    llm = client()

    await llm.complete(request().model_copy(update={"model": "claude-opus-4"}))
    await llm.complete(request())

    assert [sent(route, i)["model"] for i in range(2)] == ["claude-opus-4", RoleModels().coder]
