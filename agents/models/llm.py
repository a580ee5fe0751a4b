"""The boundary to a language model: one request, one forced tool call, real usage.

An :class:`LLMClient` has one method. The engine builds every request; the client only turns
it into an API call. Every request offers the whole toolset (`agents.protocol.TOOLS`) and
forces one tool; it keeps the stable material (the system prompt, the unit's diff) apart from
each turn's new material, so a client can cache the stable prefix across turns and roles.
"""

import functools
import json
import math
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, NonNegativeInt

from agents.models.tokens import generous_tokens
from agents.protocol import ToolSpec, toolset

CACHE_WRITE_PRICE = 1.25
"""A (five-minute) cache write, in input tokens."""

CACHE_READ_PRICE = 0.1
"""A cache read, in input tokens."""


class Role(StrEnum):
    TESTER = "tester"
    CODER = "coder"
    ARBITER = "arbiter"


class Usage(BaseModel):
    """Tokens one or more calls really used, as the API reports them."""

    model_config = ConfigDict(frozen=True)

    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    cache_creation_input_tokens: NonNegativeInt = 0
    cache_read_input_tokens: NonNegativeInt = 0

    @property
    def billed(self) -> int:
        """The usage in input-token equivalents, as the API prices it: a cache write costs
        1.25 input tokens, a cache read a tenth of one. Budgets and ceilings count this."""
        return (
            self.input_tokens
            + self.output_tokens
            + math.ceil(self.cache_creation_input_tokens * CACHE_WRITE_PRICE)
            + math.ceil(self.cache_read_input_tokens * CACHE_READ_PRICE)
        )

    @property
    def total(self) -> int:
        """Every token the calls processed, cached or not."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


class PromptBlock(BaseModel):
    """A block of the user turn. `stable` blocks repeat across turns and may be cached."""

    model_config = ConfigDict(frozen=True)

    text: str
    stable: bool = False


class LLMRequest(BaseModel):
    """One forced tool call of one agent."""

    model_config = ConfigDict(frozen=True)

    role: Role
    agent: str
    tool: ToolSpec
    system: str
    blocks: tuple[PromptBlock, ...]
    max_output_tokens: int
    round: int = 0
    subject: tuple[str, ...] = ()
    """The finding ids this turn is about (for logs, metrics and progress)."""
    model: str | None = None
    """The model a repository chose for the role; None: the client's own for it."""
    unit: str | None = None
    """The review unit whose debate makes the call (for logs and progress)."""

    def estimated_tokens(self) -> int:
        """A generous upper estimate of the billed tokens this call can use: every prompt
        token written to the cache, and the longest answer allowed."""
        chars = (
            len(self.system)
            + sum(len(b.text) for b in self.blocks)
            + _toolset_chars(self.tool.shows)
        )
        prompt = generous_tokens(chars)
        return math.ceil(prompt * CACHE_WRITE_PRICE) + self.max_output_tokens


class LLMResponse(BaseModel):
    """What the model answered: the forced tool's input (None if it did not call it)."""

    model_config = ConfigDict(frozen=True)

    tool_input: dict[str, Any] | None
    usage: Usage
    truncated: bool = False
    """The answer hit the output limit, so the tool input may be cut short."""
    seconds: float = 0.0
    """How long the model took to answer, as the client measured it (0 when unknown)."""


class LLMClient(Protocol):
    """Anything that can answer a request. Raises :class:`agents.errors.LLMError` on failure."""

    async def complete(self, request: LLMRequest) -> LLMResponse: ...


@functools.cache
def _toolset_chars(shows: frozenset[str]) -> int:
    return sum(
        len(t.description) + len(json.dumps(t.input_schema())) for t in toolset(shows).values()
    )
