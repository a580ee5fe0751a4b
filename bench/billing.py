"""What a run of a token scenario is billed: the run, the check of its accounts, and its
input priced as the Messages API prices it.

Both token scenarios (`bench.tokens`, `bench.panel_tokens`) run the real
:class:`agents.models.claude.ClaudeLLM` and the real debate engine against a local fake of the
Messages API (`tests.fakes.messages_api`), which counts tokens at four characters a token and
caches prompt prefixes as the API documents it. Billed input is counted as the API bills it:
uncached input at 1, cache writes (5-minute TTL) at 1.25, cache reads at 0.1 base input tokens
each.
"""

from dataclasses import dataclass

from agents.debate.briefs import CONTEXT_INTRO, INTENT_INTRO
from agents.models.llm import Usage as LLMUsage
from agents.outcome import Outcome
from tests.fakes.messages_api import Recorded, Usage, prompt_units

WRITE_RATE = 1.25
"""A 5-minute cache write costs 1.25 times base input."""

READ_RATE = 0.1
"""A cache read costs 0.1 times base input."""

KEY = "sk-bench-tokens"
"""The API key the scenarios' client and the fake Messages API share."""

# -- a run --------------------------------------------------------------------------------------


class ScenarioBroken(AssertionError):
    """The debate did not run as scripted, so the figures would not mean what they say."""


@dataclass(frozen=True)
class Run:
    """One run of the scenario: the debate's outcome and every request the API saw."""

    cache: bool
    outcome: Outcome
    requests: list[Recorded]

    @property
    def usages(self) -> list[Usage]:
        return [r.usage for r in self.requests if r.usage is not None]


def usage_problems(result: Run) -> list[str]:
    """What is wrong with the run's accounts: the usage the engine counted must be the usage
    the API reported, call for call summed."""
    reported = sum(
        (
            LLMUsage(
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cache_creation_input_tokens=u.cache_creation_input_tokens,
                cache_read_input_tokens=u.cache_read_input_tokens,
            )
            for u in result.usages
        ),
        LLMUsage(),
    )
    if result.outcome.usage != reported:
        return [f"the engine counted {result.outcome.usage}, the API reported {reported}"]
    return []


# -- the bill -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Figures:
    calls: int
    uncached: int
    writes: int
    reads: int
    output: int
    diff_tokens: int

    @classmethod
    def of(cls, result: Run, diff_tokens: int) -> "Figures":
        usages = result.usages
        return cls(
            calls=len(usages),
            uncached=sum(u.input_tokens for u in usages),
            writes=sum(u.cache_creation_input_tokens for u in usages),
            reads=sum(u.cache_read_input_tokens for u in usages),
            output=sum(u.output_tokens for u in usages),
            diff_tokens=diff_tokens,
        )

    @property
    def billed(self) -> float:
        return billed(self.uncached, self.writes, self.reads)

    @property
    def ratio(self) -> float:
        return self.billed / self.diff_tokens


def billed(uncached: float, writes: float, reads: float) -> float:
    """Billed-equivalent input tokens: what the input costs, in base input tokens."""
    return uncached + WRITE_RATE * writes + READ_RATE * reads


@dataclass(frozen=True, slots=True)
class CallCost:
    """One call's prompt by part, and what its input was billed."""

    tools: int
    system: int
    diff_block: int
    turn: int
    usage: Usage
    context_block: int = 0
    """The code around the diff, after it in the cached prefix (0 without context)."""
    intent_block: int = 0
    """What the pull request says it does, after the diff in the cached prefix (0 without)."""

    @property
    def prefix(self) -> int:
        return self.tools + self.system + self.diff_block + self.intent_block + self.context_block

    @property
    def prefix_rate(self) -> float:
        """What one prefix token cost this call, in base input tokens."""
        u = self.usage
        plain = self.prefix - u.cache_read_input_tokens - u.cache_creation_input_tokens
        return billed(plain, u.cache_creation_input_tokens, u.cache_read_input_tokens) / self.prefix

    @property
    def billed(self) -> float:
        u = self.usage
        return billed(u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens)


def call_costs(result: Run) -> list[CallCost]:
    """Each call's prompt split into tools, system prompt, diff block, the blocks after it and
    turn material.

    ClaudeLLM sends the shared system prompt, the diff block and, when there are any, what the
    pull request says it does and the code around the diff as the system blocks (the
    breakpoint after the last), and the turn as the user message.
    """
    costs = []
    for request in result.requests:
        if request.usage is None:
            raise ScenarioBroken(f"a call failed with HTTP {request.status}")
        units = prompt_units(request.body)
        by_label = {u.label: u.tokens for u in units}
        after_diff = {
            intro: by_label[f"system[{n}]"]
            for n, block in enumerate(request.body["system"][2:], 2)
            for intro in (INTENT_INTRO, CONTEXT_INTRO)
            if block["text"].startswith(intro)
        }
        cost = CallCost(
            tools=sum(u.tokens for u in units if u.section == "tools"),
            system=by_label["system[0]"],
            diff_block=by_label["system[1]"],
            intent_block=after_diff.get(INTENT_INTRO, 0),
            context_block=after_diff.get(CONTEXT_INTRO, 0),
            turn=sum(u.tokens for u in units if u.section == "messages"),
            usage=request.usage,
        )
        u = cost.usage
        counted = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
        if counted != cost.prefix + cost.turn:
            raise ScenarioBroken(f"{counted} input tokens reported, {cost.prefix + cost.turn} sent")
        costs.append(cost)
    if (
        len({(c.tools, c.system, c.diff_block, c.intent_block, c.context_block) for c in costs})
        != 1
    ):
        raise ScenarioBroken("the calls do not share one prompt prefix")
    return costs
