"""Answers in the shape of Anthropic's Messages API, for respx routes in tests."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import respx
from click.testing import CliRunner, Result

from app.cli.main import main

BASE_URL = "http://messages.test"
MESSAGES_URL = f"{BASE_URL}/v1/messages"


def message(
    tool: str,
    tool_input: dict[str, Any],
    *,
    stop_reason: str = "tool_use",
    input_tokens: int = 1200,
    output_tokens: int = 80,
    cache_creation: int = 0,
    cache_read: int = 0,
    model: str = "claude-sonnet-5-5",
) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "tool_use", "id": "toolu_01", "name": tool, "input": tool_input}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": cache_creation,
                "cache_read_input_tokens": cache_read,
            },
        },
    )


def error(status: int, kind: str, text: str, **headers: str) -> httpx.Response:
    return httpx.Response(
        status, json={"type": "error", "error": {"type": kind, "message": text}}, headers=headers
    )


def forced_tool(request: httpx.Request) -> str:
    body = json.loads(request.content)
    return str(body["tool_choice"]["name"])


def by_tool(**queues: list[dict[str, Any]]) -> Callable[[httpx.Request], httpx.Response]:
    """A respx side effect answering each forced tool from its own queue of tool inputs.

    The queues are copied, so one script can serve several tests. A call the script has no
    answer for is answered 400, as the fake Messages API answers it: the SDK does not retry
    it (a raised error would be taken for a dropped connection, and retried with back-off),
    and the review takes it for the model being unavailable.
    """
    remaining = {tool: list(queue) for tool, queue in queues.items()}

    def answer(request: httpx.Request) -> httpx.Response:
        tool = forced_tool(request)
        if not remaining.get(tool):
            return error(400, "invalid_request_error", f"unexpected call of {tool}")
        return message(tool, remaining[tool].pop(0))

    return answer


def reviewed(
    checkout: Path, diff: str, script: dict[str, Any], *args: str
) -> tuple[Result, list[dict[str, Any]]]:
    """`tiebreak review` of `diff` in `checkout` with `args`, the Messages API answering by
    tool as `script` says (see :func:`by_tool`): what the command did, and the requests it
    sent the API."""
    patch = checkout.parent / "change.diff"
    patch.write_text(diff)
    env = {"ANTHROPIC_BASE_URL": BASE_URL, "ANTHROPIC_API_KEY": "sk-test"}
    with respx.mock:
        route = respx.post(MESSAGES_URL).mock(side_effect=by_tool(**script))
        result = CliRunner().invoke(
            main, ["review", str(patch), "--repo", str(checkout), *args], env=env
        )
        sent = [json.loads(call.request.content) for call in route.calls]
    return result, sent
