"""A worker that dies mid-debate, for the agents' tests of resuming a debate from its journal."""

from agents.models.llm import LLMRequest, LLMResponse
from agents.models.scripted import ScriptedLLM


class WorkerDied(Exception):
    """The process running the debate went away mid-call."""


class DiesAt:
    """A model client whose `call`-th call never comes back (the worker died during it)."""

    def __init__(self, llm: ScriptedLLM, call: int) -> None:
        self.llm = llm
        self.call = call
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls == self.call:
            raise WorkerDied
        return await self.llm.complete(request)
