"""One agent turn: the call asked for, its accounting, and its validation, with bounded retries.

A turn is one forced tool call, repeated up to `max_turn_attempts` times while the model's
answer is unusable: the model is unavailable, the answer was cut at the output limit, the tool
was not called, or the tool input breaks the schema or a rule. Each attempt is charged to the
edges it used (the review's ceiling is the driver's, who makes the call), and each refusal is
fed back to the next attempt.

A tool input is judged item by item (:mod:`agents.debate.input_checks`): the items that pass
are adopted at once, and when some are refused, the next attempt asks again about those alone,
each with its reasons — its subject, and so its tokens and the edges it is charged to, are theirs. A
call whose every item is refused, or whose input is unusable as a whole, is a failed attempt
and is asked again whole. A turn that adopted nothing is one failed turn, never a crash; one
that adopted part of its input and still had items refused when its attempts ran out is one
partial turn.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from agents.debate.briefs import retry_brief
from agents.debate.input_checks import schema_problems
from agents.debate.needs import CallEnd, Steps, call
from agents.debate.prompts import SYSTEM, role_brief
from agents.debate.refusals import Checked, Refusal
from agents.models.llm import LLMRequest, LLMResponse, PromptBlock, Role, Usage
from agents.outcome import Outcome, Turn
from agents.protocol import ToolName, toolset
from policies.budget import PairwiseBudget
from policies.config import Models
from policies.debate import DebatePolicy
from policies.panel import Focus

T = TypeVar("T")

Parse = Callable[[dict[str, Any], tuple[str, ...]], Checked[T]]
"""Parses and checks a tool input, given the findings the attempt asked about."""
Adopt = Callable[[T], None]
Edges = Sequence[PairwiseBudget] | Callable[[tuple[str, ...]], Sequence[PairwiseBudget]]
"""The edges a call is charged to, or how to find them from the findings it asks about."""


@dataclass(frozen=True, slots=True)
class Ask:
    """Who a turn asks, with which tool, about what, and on which edges it is charged."""

    role: Role
    tool: ToolName
    blocks: Sequence[PromptBlock]
    """What the turn shows, after the role's brief."""
    edges: Edges
    round: int
    subject: tuple[str, ...] = ()
    """The findings the turn is about."""
    agent: str | None = None
    """The panel tester asked, if not the role's one agent."""
    focus: Focus = Focus.GENERAL


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """How a turn ended: whether any of its input was adopted, and the findings whose items
    were still refused when its attempts ran out."""

    adopted: bool
    refused: tuple[str, ...] = ()


class Turns:
    """Makes the turns of one debate and keeps its accounts: which calls were made, what
    they used, which failed. The calls themselves are the driver's."""

    def __init__(
        self,
        policy: DebatePolicy,
        *,
        shows: frozenset[str] = frozenset(),
        models: Models | None = None,
        unit: str | None = None,
    ) -> None:
        self.policy = policy
        self.unit = unit
        """The id of the unit whose debate this is, named on each request."""
        self.models = models or Models()
        """The repository's choice of model for each role, where it made one."""
        self.tools = toolset(shows)
        """The tools as the agents are shown them, with the optional fields the review uses
        (`reproduction` if tests are run, the report's `walkthrough` if one is asked for)."""
        self.turns: list[Turn] = []
        self.usage_by_role: dict[Role, Usage] = {}
        self.failed_turns = 0
        self.partial_turns = 0

    def run(self, ask: Ask, parse: Parse[T], adopt: Adopt[T]) -> Steps[TurnEnd]:
        """Make one turn, handing each attempt's adoptable input to `adopt` as it lands.

        Raises :class:`policies.errors.BudgetExhausted` when an edge is spent before an
        attempt, and :class:`policies.errors.OutOfTokens` when the next attempt could cross
        the review's ceiling or the allowance it shares; what was adopted before stays.
        """
        asked, adopted = ask.subject, False
        problems: list[str] = []  # why the last call was refused as a whole
        pending: tuple[Refusal, ...] = ()  # the refused items the next attempt asks about
        for attempt in range(1, self.policy.max_turn_attempts + 1):
            charged = ask.edges(asked) if callable(ask.edges) else ask.edges
            for budget in charged:
                budget.check()
            retry = None
            if adopted:
                retry = retry_brief(ask.tool, problems, pending)
            elif problems:
                retry = retry_brief(ask.tool, problems)
            request = self._request(ask, asked, retry)
            end = yield from call(request)
            self._charge(request, end, charged, ask.round)
            response, problems, checked = _attempted(end, request, parse)
            took = checked is not None and checked.adoptable
            if took and checked is not None:
                adopt(checked.value)
                adopted = True
            error = "; ".join(problems) or None
            self._record(request, ask.round, attempt, response, error, partial=took and bool(error))
            if not problems:
                return TurnEnd(adopted=True)
            if checked is not None:
                pending = tuple(r for r in checked.refused if r.askable)
                if adopted:
                    problems = []  # the refusals carry their own reasons
            if adopted:
                if not pending:
                    break  # nothing refused can be asked about again
                asked = _asked_again(ask.subject, pending)
        if not adopted:
            self.failed_turns += 1
            return TurnEnd(adopted=False)
        self.partial_turns += 1
        return TurnEnd(adopted=True, refused=_asked_again(ask.subject, pending))

    def _request(self, ask: Ask, asked: tuple[str, ...], retry: PromptBlock | None) -> LLMRequest:
        """The call an attempt makes: about `asked`, with what the last refusal said."""
        return LLMRequest(
            role=ask.role,
            agent=ask.agent or str(ask.role),
            tool=self.tools[ask.tool],
            system=SYSTEM,
            blocks=_layout(role_brief(ask.role, ask.focus), ask.blocks, retry),
            max_output_tokens=self.policy.max_output_tokens,
            round=ask.round,
            subject=asked,
            model=getattr(self.models, ask.role.value),
            unit=self.unit,
        )

    def restore(self, outcome: Outcome) -> None:
        """Continue the accounts of a finished debate."""
        self.turns = list(outcome.transcript.turns)
        self.usage_by_role = dict(outcome.usage_by_role)
        self.failed_turns = outcome.failed_turns
        self.partial_turns = outcome.partial_turns

    def tokens_by_finding(self) -> dict[str, int]:
        """Each finding's share of the billed tokens of the turns that were about it."""
        shares: dict[str, float] = {}
        for turn in self.turns:
            for finding_id in turn.subject:
                share = turn.usage.billed / len(turn.subject)
                shares[finding_id] = shares.get(finding_id, 0.0) + share
        return {finding_id: round(share) for finding_id, share in shares.items()}

    def _charge(
        self, request: LLMRequest, end: CallEnd, edges: Sequence[PairwiseBudget], round: int
    ) -> None:
        usage = end.response.usage if end.response else Usage()
        self.usage_by_role[request.role] = self.usage_by_role.get(request.role, Usage()) + usage
        share, rest = divmod(usage.billed, len(edges)) if edges else (0, 0)
        for i, budget in enumerate(edges):
            budget.spend(share + (1 if i < rest else 0), round=round, note=request.agent)

    def _record(
        self,
        request: LLMRequest,
        round: int,
        attempt: int,
        response: LLMResponse | None,
        error: str | None,
        *,
        partial: bool,
    ) -> None:
        self.turns.append(
            Turn(
                round=round,
                agent=request.agent,
                role=request.role,
                tool=request.tool.name,
                attempt=attempt,
                usage=response.usage if response else Usage(),
                subject=request.subject,
                error=error,
                partial=partial,
                seconds=response.seconds if response else 0.0,
            )
        )


def _attempted(
    end: CallEnd, request: LLMRequest, parse: Parse[T]
) -> tuple[LLMResponse | None, list[str], Checked[T] | None]:
    """An attempt's answer (None if there was none), why it was refused (wholly or in
    part), and the checked input (None if it was unusable as a whole)."""
    if end.response is None:
        return None, [f"the model was unavailable: {end.unavailable}"], None
    problems, checked = _read(end.response, request, parse)
    return end.response, problems, checked


def _read(
    response: LLMResponse, request: LLMRequest, parse: Parse[T]
) -> tuple[list[str], Checked[T] | None]:
    """Why an answer was refused (nothing, if it is adopted whole), and its checked input
    (None if it is unusable as a whole)."""
    if response.truncated:
        return ["the answer was cut off at the output limit; be briefer"], None
    if response.tool_input is None:
        return [f"you did not call {request.tool.name}"], None
    try:
        checked = parse(response.tool_input, request.subject)
    except ValidationError as exc:
        return schema_problems(exc), None
    return checked.problems(), checked


def _asked_again(subject: tuple[str, ...], pending: Sequence[Refusal]) -> tuple[str, ...]:
    """The findings of `subject` whose items were refused, in the turn's order."""
    refused = {r.finding_id for r in pending}
    return tuple(i for i in subject if i in refused)


def _layout(
    role: PromptBlock, blocks: Sequence[PromptBlock], retry: PromptBlock | None
) -> tuple[PromptBlock, ...]:
    """Stable blocks first (they extend the cached prefix), then the role and the turn."""
    stable = tuple(b for b in blocks if b.stable)
    turn = tuple(b for b in blocks if not b.stable)
    return (*stable, role, *turn, *((retry,) if retry else ()))
