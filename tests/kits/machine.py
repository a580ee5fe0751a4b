"""A debate machine driven by a plain loop: canned answers and test results, no event loop.

What the worker's driver does with a model and a verifier, :func:`play` does with a script
and a function of each test run, synchronously, under the same token ceiling's rules.
"""

import asyncio
from collections.abc import Callable
from typing import TypeVar

from agents.debate.needs import AskModel, CallEnd, OwnTest, Reply, Run, Steps, TrialResult
from agents.errors import LLMUnavailable
from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM
from agents.verification import Verifier
from policies.budget import TokenCeiling
from policies.errors import OutOfTokens

R = TypeVar("R")

Shows = Callable[[Run], TrialResult]
"""What a test run shows, given the run."""


def shown_by(verifier: Verifier) -> Shows:
    """What `verifier` shows of each run, as the worker's driver would have it run."""

    def shows(run: Run) -> TrialResult:
        if isinstance(run, OwnTest):
            return asyncio.run(verifier.run_own(run.test))
        if run.checks_fix:
            return asyncio.run(verifier.check_fix(run.reproduction, run.patches))
        return asyncio.run(verifier.reproduce(run.reproduction))

    return shows


def play(
    steps: Steps[R],
    llm: ScriptedLLM,
    *,
    ceiling: TokenCeiling,
    shows: Shows | None = None,
) -> R:
    """Run `steps` to its end, each call answered by `llm` within `ceiling`, each test run by
    `shows`."""
    need = next(steps)
    while True:
        reply: Reply
        if isinstance(need, AskModel):
            reply = _call(need.request, llm, ceiling)
        else:
            assert shows is not None, "a debate without tests asked for test runs"
            reply = tuple(shows(run) for run in need.runs)
        try:
            need = steps.send(reply)
        except StopIteration as stop:
            result: R = stop.value
            return result


def _call(request: LLMRequest, llm: ScriptedLLM, ceiling: TokenCeiling) -> CallEnd:
    reserved = request.estimated_tokens()
    try:
        ceiling.reserve(reserved)
    except OutOfTokens as exc:
        return CallEnd(refused=exc)
    try:
        response = llm.answer(request)
    except LLMUnavailable as exc:
        ceiling.settle(reserved, 0)
        return CallEnd(unavailable=str(exc))
    ceiling.settle(reserved, response.usage.billed)
    return CallEnd(response=response)
