"""Pairwise token budgets and the hard per-review ceiling.

Each edge of the debate (coder↔tester, one per tester of a panel, and each edge to the
arbiter) has a budget B that the exchanges on it spend with the tokens they really used.
Progress earns time: when the edge's open diff shrinks, B grows in proportion to the shrink,
up to a cap. Repetition ends the edge: when the coder's answers for the open findings are
identical to its previous turn, B drops to zero at once. A spent edge raises
:class:`BudgetExhausted`: the engine takes that tester out of the debate, and once no tester
is left, settles what is open (a panel's majority, or the arbiter).

The :class:`TokenCeiling` is the review's hard limit, shared by all its debates: a call must
reserve its worst-case size before it starts, so concurrent debates cannot overshoot together.
Beyond the review, an :class:`Allowance` (an installation's daily cap) may be shared by many
reviews at once; the ceiling reserves each call there too.
"""

import asyncio
import math
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from policies.debate import DebatePolicy
from policies.errors import AllowanceExhausted, BudgetExhausted, CeilingReached


def edge_name(a: str, b: str) -> str:
    """The name of the undirected edge between two agents, the same in either order."""
    first, second = sorted((a, b))
    return f"{first}↔{second}"


class BudgetEventKind(StrEnum):
    OPEN = "open"
    SPEND = "spend"
    GROW = "grow"
    DROP = "drop"


@dataclass(frozen=True, slots=True)
class BudgetEvent:
    """One change of an edge's budget, for the transcript's budget history."""

    round: int
    kind: BudgetEventKind
    limit: int
    spent: int
    note: str = ""


class PairwiseBudget:
    """The token budget of one edge."""

    def __init__(self, edge: str, *, limit: int, cap: int, growth: float) -> None:
        self.edge = edge
        self._limit = limit
        self._cap = max(cap, limit)
        self._growth = growth
        self._spent = 0
        self._dropped = False
        self._last_answers: dict[str, str] = {}
        self.history: list[BudgetEvent] = [BudgetEvent(0, BudgetEventKind.OPEN, limit, 0)]

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def spent(self) -> int:
        return self._spent

    @property
    def remaining(self) -> int:
        return max(0, self._limit - self._spent)

    @property
    def exhausted(self) -> bool:
        return self.remaining == 0

    def check(self) -> None:
        """Raise :class:`BudgetExhausted` if nothing is left on this edge."""
        if self.exhausted:
            raise BudgetExhausted(self.edge, self._spent, self._limit)

    def spend(self, tokens: int, *, round: int, note: str = "") -> None:
        self._spent += tokens
        self._record(round, BudgetEventKind.SPEND, note)

    def observe_open_diff(self, previous: int, current: int, *, round: int) -> None:
        """Grow the budget in proportion to how much the open diff shrank."""
        if self._dropped or previous <= 0 or current >= previous:
            return
        shrink = (previous - current) / previous
        factor = 1 + (self._growth - 1) * shrink
        grown = min(self._cap, math.ceil(self._limit * factor))
        if grown > self._limit:
            self._limit = grown
            self._record(round, BudgetEventKind.GROW, f"open diff {previous} → {current} lines")

    def observe_answers(self, answers: Mapping[str, str], *, round: int) -> bool:
        """Drop the budget to zero if the coder repeated its previous answers exactly.

        `answers` maps each finding answered this turn to its message digest; the turn
        repeats when every one of them equals the previous answer to the same finding.
        Returns whether the budget was dropped.
        """
        repeated = bool(answers) and all(
            self._last_answers.get(finding) == digest for finding, digest in answers.items()
        )
        self._last_answers.update(answers)
        if not repeated or self._dropped:
            return False
        self._dropped = True
        self._limit = self._spent
        self._record(round, BudgetEventKind.DROP, "coder repeated its previous answers")
        return True

    def _record(self, round: int, kind: BudgetEventKind, note: str) -> None:
        self.history.append(BudgetEvent(round, kind, self._limit, self._spent, note))


def debate_budgets(
    policy: DebatePolicy, *, coder: str, testers: Sequence[str], arbiter: str
) -> dict[str, PairwiseBudget]:
    """The budgets of one debate's edges, by edge name.

    Each coder-tester edge starts at `initial_budget` and may grow with progress; each edge
    to the arbiter (from the coder and from every tester) has a fixed `arbiter_budget`.
    """
    budgets = {}
    for tester in testers:
        name = edge_name(coder, tester)
        budgets[name] = PairwiseBudget(
            name, limit=policy.initial_budget, cap=policy.budget_cap, growth=policy.budget_growth
        )
    for party in (coder, *testers):
        name = edge_name(arbiter, party)
        budgets[name] = PairwiseBudget(
            name, limit=policy.arbiter_budget, cap=policy.arbiter_budget, growth=1.0
        )
    return budgets


Settle = Callable[[int], Awaitable[None]]
"""Settles one reservation with the tokens the call really used."""


class Allowance(Protocol):
    """Tokens shared by many reviews, such as an installation's daily cap."""

    async def reserve(self, tokens: int) -> Settle | None:
        """Reserve `tokens` for one call: None if the allowance cannot cover them, else the
        function that settles the reservation with what the call used."""
        ...


MIN_CEILING = 10_000
"""The smallest token ceiling a review runs with: a daily allowance with less left than this
starts no review (nor a ruling, nor a hearing), and `/tiebreak budget` sets no less."""


class TokenCeiling:
    """The hard token ceiling of one review, shared by all of its debates.

    A call reserves its worst case before it starts and settles with what it used; reserved
    tokens count as spent meanwhile, so concurrent debates cannot pass the ceiling together.
    A call that does not fit beside the calls under way, but would once they settle, waits for
    them (their reservations are upper estimates); calls are served in the order they asked, so
    the units started first, the riskiest, get the ceiling first. With an `allowance`,
    :meth:`take` reserves each call there as well.
    """

    def __init__(self, ceiling: int, allowance: Allowance | None = None) -> None:
        self.ceiling = ceiling
        self.allowance = allowance
        self._spent = 0
        self._reserved = 0
        self._line: deque[object] = deque()
        """The calls waiting for room, in the order they asked."""
        self._changed = asyncio.Event()
        """Set, and replaced, when a reservation settles or the line moves."""

    @property
    def spent(self) -> int:
        return self._spent

    @property
    def remaining(self) -> int:
        return max(0, self.ceiling - self._spent - self._reserved)

    def reserve(self, needed: int) -> None:
        """Reserve `needed` tokens for a call, or raise :class:`CeilingReached`."""
        if needed > self.remaining:
            raise CeilingReached(self._spent, self._reserved, needed, self.ceiling)
        self._reserved += needed

    def settle(self, reserved: int, used: int) -> None:
        """Release a reservation and charge what the call really used."""
        self._reserved -= reserved
        self._spent += used
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _may_fit(self, needed: int) -> bool:
        """Whether a call that does not fit now could once the calls under way settle."""
        return (
            needed > self.remaining and self._reserved > 0 and needed <= self.ceiling - self._spent
        )

    async def _turn(self, needed: int) -> None:
        """Wait until the calls that asked before have been served and `needed` fits, or
        can no longer fit whatever the calls under way settle at."""
        if not self._line and not self._may_fit(needed):
            return
        turn = object()
        self._line.append(turn)
        try:
            while self._line[0] is not turn or self._may_fit(needed):
                await self._changed.wait()
        finally:
            self._line.remove(turn)
            self._wake()

    async def take(self, needed: int) -> Settle:
        """Reserve `needed` tokens for a call here and in the allowance; return the function
        that settles both with what the call used.

        Raises :class:`CeilingReached`, or :class:`AllowanceExhausted` when the shared
        allowance is what cannot cover the call.
        """
        await self._turn(needed)
        self.reserve(needed)
        settle_shared = None
        if self.allowance is not None:
            try:
                settle_shared = await self.allowance.reserve(needed)
            finally:
                if settle_shared is None:
                    self.settle(needed, 0)
            if settle_shared is None:
                raise AllowanceExhausted(needed)

        async def settle(used: int) -> None:
            self.settle(needed, used)
            if settle_shared is not None:
                await settle_shared(used)

        return settle
