"""The fake Messages API behaves like the real one where Tiebreak depends on it.

Every test drives the fake through the real SDK over loopback, so what is checked here is
what a ClaudeLLM test or a benchmark will see: the usage counters of prompt caching, the
error mapping, authentication and the recorded requests.
"""

import http.client
import json
import math
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anthropic
import pytest

from tests.fakes.messages_api import (
    Error,
    FakeMessagesAPI,
    ManualClock,
    QueuedResponder,
    Truncated,
    Unscripted,
)

KEY = "sk-fake-test"
SONNET, OPUS = "claude-sonnet-5-5", "claude-opus-5-5"
TOOL = {
    "name": "report_findings",
    "description": "Report the findings.",
    "input_schema": {"type": "object", "properties": {"findings": {"type": "array"}}},
}
OTHER_TOOL = {**TOOL, "name": "arbitrate", "description": "Rule."}
PROMPT = "p" * 4000  # 1,000 tokens at four characters a token
DIFF = "d" * 2000  # 500 tokens
TURN = "t" * 400  # 100 tokens
REPLY: dict[str, Any] = {"findings": []}


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


TOOL_TOKENS = tokens(json.dumps(TOOL, separators=(",", ":")))
OTHER_TOOL_TOKENS = tokens(json.dumps(OTHER_TOOL, separators=(",", ":")))
PREFIX = TOOL_TOKENS + OTHER_TOOL_TOKENS + tokens(PROMPT) + tokens(DIFF)


def params(
    *,
    model: str = SONNET,
    system: Sequence[str] = (PROMPT, DIFF),
    breakpoints: Sequence[int] = (1,),
    turn: str = TURN,
    tool: str = "report_findings",
) -> dict[str, Any]:
    """A request laid out as ClaudeLLM lays it out: tools, system blocks, one user turn."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in system]
    for i in breakpoints:
        blocks[i]["cache_control"] = {"type": "ephemeral"}
    return {
        "model": model,
        "max_tokens": 1024,
        "tools": [TOOL, OTHER_TOOL],
        "tool_choice": {"type": "tool", "name": tool},
        "system": blocks,
        "messages": [{"role": "user", "content": [{"type": "text", "text": turn}]}],
    }


def answered(n: int = 10) -> FakeMessagesAPI:
    return FakeMessagesAPI(lambda body: REPLY, api_key=KEY)


def counters(message: anthropic.types.Message) -> tuple[int, int, int]:
    usage = message.usage
    return (
        usage.input_tokens,
        usage.cache_creation_input_tokens or 0,
        usage.cache_read_input_tokens or 0,
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def api(clock: ManualClock) -> AsyncIterator[FakeMessagesAPI]:
    with FakeMessagesAPI(lambda body: REPLY, api_key=KEY, clock=clock) as fake:
        yield fake


@pytest.fixture
async def client(api: FakeMessagesAPI) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic.AsyncAnthropic(api_key=KEY, base_url=api.base_url, max_retries=0) as c:
        yield c


# -- the message ------------------------------------------------------------------------------


async def test_answers_with_a_tool_use_message_the_sdk_parses(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    message = await client.messages.create(**params(model=OPUS, tool="arbitrate"))

    assert message.model == OPUS
    assert message.role == "assistant"
    assert message.stop_reason == "tool_use"
    (block,) = message.content
    assert block.type == "tool_use"
    assert (block.name, block.input) == ("arbitrate", REPLY)
    assert message.usage.output_tokens == tokens(json.dumps(REPLY, separators=(",", ":")))


async def test_counts_every_prompt_unit_at_four_characters_a_token(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    message = await client.messages.create(**params(breakpoints=()))

    assert counters(message) == (PREFIX + tokens(TURN), 0, 0)


async def test_records_each_request_with_its_headers_body_and_usage(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    await client.messages.create(**params())

    (recorded,) = api.requests
    assert recorded.headers["authorization"] == f"Bearer {KEY}"
    assert recorded.headers["anthropic-version"]
    assert recorded.body["model"] == SONNET
    assert recorded.tool == "report_findings"
    assert recorded.usage == api.usages[0]
    assert recorded.usage is not None
    assert recorded.usage.cache_creation_input_tokens == PREFIX


# -- prompt caching ---------------------------------------------------------------------------


async def test_the_first_call_writes_the_prefix_and_the_next_one_reads_it(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    first = await client.messages.create(**params())
    second = await client.messages.create(**params(turn="another turn, another role"))

    assert counters(first) == (tokens(TURN), PREFIX, 0)
    assert counters(second) == (tokens("another turn, another role"), 0, PREFIX)
    assert first.usage.cache_creation is not None
    assert first.usage.cache_creation.ephemeral_5m_input_tokens == PREFIX


async def test_a_changed_diff_misses_the_cache(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    await client.messages.create(**params())
    changed = await client.messages.create(**params(system=(PROMPT, "e" * 2000)))

    assert counters(changed) == (tokens(TURN), PREFIX, 0)


async def test_a_changed_diff_still_reads_an_earlier_breakpoint(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    await client.messages.create(**params(breakpoints=(0, 1)))
    changed = await client.messages.create(
        **params(system=(PROMPT, "e" * 2000), breakpoints=(0, 1))
    )

    shared = PREFIX - tokens(DIFF)
    assert counters(changed) == (tokens(TURN), tokens(DIFF), shared)


async def test_another_model_misses_the_cache(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    await client.messages.create(**params(model=SONNET))
    other = await client.messages.create(**params(model=OPUS))
    again = await client.messages.create(**params(model=SONNET))

    assert counters(other) == (tokens(TURN), PREFIX, 0)
    assert counters(again) == (tokens(TURN), 0, PREFIX)


async def test_a_prefix_below_the_minimum_is_not_cached(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    short = ("a short prompt", "a short diff")
    total = TOOL_TOKENS + OTHER_TOOL_TOKENS + tokens(short[0]) + tokens(short[1]) + tokens(TURN)
    assert total - tokens(TURN) < 1024

    first = await client.messages.create(**params(system=short))
    second = await client.messages.create(**params(system=short))

    assert counters(first) == (total, 0, 0)
    assert counters(second) == (total, 0, 0)


async def test_the_minimum_is_configurable() -> None:
    short = ("a short prompt", "a short diff")
    prefix = TOOL_TOKENS + OTHER_TOOL_TOKENS + tokens(short[0]) + tokens(short[1])
    with FakeMessagesAPI(lambda body: REPLY, api_key=KEY, min_cacheable_tokens=prefix) as api:
        async with anthropic.AsyncAnthropic(api_key=KEY, base_url=api.base_url) as client:
            first = await client.messages.create(**params(system=short))
            second = await client.messages.create(**params(system=short))

    assert counters(first) == (tokens(TURN), prefix, 0)
    assert counters(second) == (tokens(TURN), 0, prefix)


async def test_only_breakpoints_past_the_minimum_are_cached(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    request = params(system=("a short prompt", PROMPT), breakpoints=(0, 1))
    first = await client.messages.create(**request)
    second = await client.messages.create(**request)

    prefix = TOOL_TOKENS + OTHER_TOOL_TOKENS + tokens("a short prompt") + tokens(PROMPT)
    assert counters(first) == (tokens(TURN), prefix, 0)
    assert counters(second) == (tokens(TURN), 0, prefix)


async def test_an_entry_expires_five_minutes_after_its_last_use(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic, clock: ManualClock
) -> None:
    await client.messages.create(**params())
    clock.advance(299)
    read = await client.messages.create(**params())
    clock.advance(299)  # 598 s after the write, 299 s after the read that refreshed it
    refreshed = await client.messages.create(**params())
    clock.advance(300)
    expired = await client.messages.create(**params())

    assert counters(read) == (tokens(TURN), 0, PREFIX)
    assert counters(refreshed) == (tokens(TURN), 0, PREFIX)
    assert counters(expired) == (tokens(TURN), PREFIX, 0)


async def test_a_one_hour_breakpoint_outlives_five_minutes(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic, clock: ManualClock
) -> None:
    request = params()
    request["system"][1]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    first = await client.messages.create(**request)
    clock.advance(3000)
    later = await client.messages.create(**request)

    assert first.usage.cache_creation is not None
    assert first.usage.cache_creation.ephemeral_1h_input_tokens == PREFIX
    assert counters(later) == (tokens(TURN), 0, PREFIX)


async def test_a_changed_tool_choice_misses_message_breakpoints_only(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    request = params(breakpoints=(1,))
    request["messages"][0]["content"][0]["cache_control"] = {"type": "ephemeral"}
    await client.messages.create(**request)
    request["tool_choice"] = {"type": "tool", "name": "arbitrate"}
    switched = await client.messages.create(**request)

    assert counters(switched) == (0, tokens(TURN), PREFIX)


async def test_the_top_level_cache_control_marks_the_last_block(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    request = params(breakpoints=())
    first = await client.messages.create(**request, cache_control={"type": "ephemeral"})
    second = await client.messages.create(**request, cache_control={"type": "ephemeral"})

    assert counters(first) == (0, PREFIX + tokens(TURN), 0)
    assert counters(second) == (0, 0, PREFIX + tokens(TURN))


async def test_more_than_four_breakpoints_are_refused(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    request = params(system=[PROMPT] * 5, breakpoints=range(5))

    with pytest.raises(anthropic.BadRequestError) as raised:
        await client.messages.create(**request)

    assert raised.value.type == "invalid_request_error"
    assert "maximum of 4 blocks with cache_control" in str(raised.value)


# -- replies, errors and authentication ----------------------------------------------------


async def test_queued_replies_answer_each_tool_in_order() -> None:
    seen: list[str] = []

    def from_body(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body["messages"][0]["content"][0]["text"])
        return {"findings": ["second"]}

    fake = FakeMessagesAPI.queued(
        api_key=KEY,
        report_findings=[{"findings": ["first"]}, from_body],
        arbitrate=[{"rulings": []}],
    )
    with fake as api:
        async with anthropic.AsyncAnthropic(api_key=KEY, base_url=api.base_url) as client:
            first = await client.messages.create(**params())
            ruling = await client.messages.create(**params(tool="arbitrate"))
            second = await client.messages.create(**params(turn="the second turn"))

    assert [m.content[0].input for m in (first, ruling, second)] == [
        {"findings": ["first"]},
        {"rulings": []},
        {"findings": ["second"]},
    ]
    assert seen == ["the second turn"]
    assert isinstance(fake.responder, QueuedResponder)
    assert fake.responder.remaining() == {}


async def test_an_injected_error_is_answered_with_its_status_body_and_headers() -> None:
    overloaded = Error(529, "overloaded_error", "Overloaded", {"retry-after": "7"})
    with FakeMessagesAPI.queued(api_key=KEY, report_findings=[overloaded, REPLY]) as api:
        async with anthropic.AsyncAnthropic(
            api_key=KEY, base_url=api.base_url, max_retries=0
        ) as client:
            with pytest.raises(anthropic.OverloadedError) as raised:
                await client.messages.create(**params())
            after = await client.messages.create(**params())

    error = raised.value
    assert error.status_code == 529
    assert error.response.headers["retry-after"] == "7"
    assert error.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert after.content[0].input == REPLY
    assert [r.status for r in api.requests] == [529, 200]
    assert api.requests[0].usage is None


async def test_an_error_costs_nothing_and_caches_nothing() -> None:
    overloaded = Error(529, "overloaded_error", "Overloaded", {"retry-after-ms": "1"})
    with FakeMessagesAPI.queued(api_key=KEY, report_findings=[overloaded, REPLY]) as api:
        # The SDK's own retry gets the next queued reply.
        async with anthropic.AsyncAnthropic(
            api_key=KEY, base_url=api.base_url, max_retries=1
        ) as client:
            message = await client.messages.create(**params())

    assert [r.status for r in api.requests] == [529, 200]
    assert counters(message) == (tokens(TURN), PREFIX, 0)


async def test_a_truncated_reply_stops_at_max_tokens() -> None:
    cut = Truncated({"findings": [{"claim": "the answer was c"}]})
    with FakeMessagesAPI.queued(api_key=KEY, report_findings=[cut]) as api:
        async with anthropic.AsyncAnthropic(api_key=KEY, base_url=api.base_url) as client:
            message = await client.messages.create(**params())

    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 1024
    assert message.content[0].input == cut.tool_input


async def test_a_wrong_key_is_refused_without_using_a_reply() -> None:
    with FakeMessagesAPI.queued(api_key=KEY, report_findings=[REPLY]) as api:
        async with anthropic.AsyncAnthropic(
            api_key="sk-wrong", base_url=api.base_url, max_retries=0
        ) as client:
            with pytest.raises(anthropic.AuthenticationError) as raised:
                await client.messages.create(**params())

    assert raised.value.status_code == 401
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    assert isinstance(api.responder, QueuedResponder)
    assert api.responder.remaining() == {"report_findings": 1}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"x-api-key": KEY}, 200),
        ({"x-api-key": "sk-wrong"}, 401),
        ({"authorization": f"Bearer {KEY}"}, 200),
        ({}, 401),
    ],
)
def test_the_key_may_come_as_x_api_key_or_a_bearer_token(
    headers: dict[str, str], status: int
) -> None:
    with FakeMessagesAPI(lambda body: REPLY, api_key=KEY) as api:
        host, port = api.base_url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=5)
        try:
            connection.request(
                "POST",
                "/v1/messages",
                body=json.dumps(params()),
                headers={**headers, "anthropic-version": "2023-06-01"},
            )
            response = connection.getresponse()
            body = json.loads(response.read())
        finally:
            connection.close()

    assert response.status == status
    assert body["type"] == ("message" if status == 200 else "error")


async def test_a_call_the_script_did_not_expect_fails_the_call_and_the_block() -> None:
    async def unexpected_call(api: FakeMessagesAPI) -> None:
        async with anthropic.AsyncAnthropic(
            api_key=KEY, base_url=api.base_url, max_retries=0
        ) as client:
            with pytest.raises(anthropic.BadRequestError, match="no reply queued"):
                await client.messages.create(**params(tool="arbitrate"))

    fake = FakeMessagesAPI.queued(api_key=KEY, report_findings=[REPLY])
    with pytest.raises(Unscripted, match="no reply queued for a arbitrate call"), fake as api:
        await unexpected_call(api)

    assert len(fake.problems) == 1


async def test_only_forced_tool_calls_are_answered(
    api: FakeMessagesAPI, client: anthropic.AsyncAnthropic
) -> None:
    request = params()
    request["tool_choice"] = {"type": "auto"}

    with pytest.raises(anthropic.BadRequestError, match="forced tool calls only"):
        await client.messages.create(**request)


# -- lifecycle -------------------------------------------------------------------------------


async def test_stopping_ends_the_server_its_threads_and_kept_alive_connections() -> None:
    before = set(threading.enumerate())
    with FakeMessagesAPI(lambda body: REPLY, api_key=KEY) as api:
        # The client is closed only after the server: its kept-alive connection must not
        # hold the server's handler thread.
        client = anthropic.AsyncAnthropic(api_key=KEY, base_url=api.base_url, max_retries=0)
        await client.messages.create(**params())
        base_url = api.base_url
    try:
        # asyncio's executor thread (the SDK resolves host names there) is the loop's own.
        new = set(threading.enumerate()) - before
        assert [t.name for t in new if not t.name.startswith("asyncio_")] == []
        with pytest.raises(anthropic.APIConnectionError):
            await client.messages.create(**params())
    finally:
        await client.close()
    with pytest.raises(RuntimeError, match="not running"):
        _ = api.base_url
    assert base_url.startswith("http://127.0.0.1:")
