"""A scripted LLM: a function of the request gives the tool input and the usage.

Used by the tests, the benchmarks and anyone who wants to run the engine without a model.
A script sees the whole request — role, tool, the findings the turn is about — and answers
with a tool input (usage is then derived from the request's size, deterministically), a full
:class:`LLMResponse`, or an exception to raise.
"""

import json
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from agents.models.llm import LLMRequest, LLMResponse, Role, Usage
from agents.models.tokens import typical_tokens

Reply = dict[str, Any] | LLMResponse | Exception
Script = Callable[[LLMRequest], Reply]


class ScriptedLLM:
    """An :class:`agents.models.llm.LLMClient` whose answers come from a script."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return self.answer(request)

    def answer(self, request: LLMRequest) -> LLMResponse:
        """The script's answer to `request`, at once: for a driver with no event loop."""
        self.requests.append(request)
        reply = self.script(request)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, LLMResponse):
            return reply
        return LLMResponse(tool_input=reply, usage=usage_for(request, reply))

    def calls(self, role: Role) -> list[LLMRequest]:
        return [r for r in self.requests if r.role is role]


def usage_for(request: LLMRequest, tool_input: dict[str, Any]) -> Usage:
    """Deterministic usage: the request's and the answer's size at four characters a token."""
    prompt = request.system + "".join(b.text for b in request.blocks)
    output = min(typical_tokens(json.dumps(tool_input)), request.max_output_tokens)
    return Usage(input_tokens=typical_tokens(prompt), output_tokens=output)


ScriptStep = Reply | Callable[[LLMRequest], Reply]
K = TypeVar("K", bound=Hashable)


def by_role(**steps: Iterable[ScriptStep]) -> Script:
    """A script that answers each role from its own queue of steps, in order.

    `by_role(tester=[...], coder=[...], arbiter=[...])`; a step is a reply or a function of the
    request giving one. A role whose queue is empty raises AssertionError: the debate made a
    call the script did not expect.
    """
    return _queued({Role(role): queue for role, queue in steps.items()}, lambda r: r.role)


def by_agent(steps: Mapping[str, Iterable[ScriptStep]]) -> Script:
    """A script that answers each agent — `coder`, `arbiter`, or a panel tester such as
    `tester-security` — from its own queue of steps, in order, like :func:`by_role`."""
    return _queued(steps, lambda r: r.agent)


def _queued(steps: Mapping[K, Iterable[ScriptStep]], key: Callable[[LLMRequest], K]) -> Script:
    queues = {k: deque(queue) for k, queue in steps.items()}

    def script(request: LLMRequest) -> Reply:
        queue = queues.get(key(request))
        if not queue:
            raise AssertionError(f"unexpected {request.agent} call ({request.tool.name})")
        step = queue.popleft()
        return step(request) if callable(step) else step

    return script
