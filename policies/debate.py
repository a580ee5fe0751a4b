"""`DebatePolicy`: every limit the debate engine obeys, in one frozen, validated model.

The per-repository config file embeds this model, so each limit here is also a documented
option there. Termination is guaranteed by these limits whatever the models say: the call
bound is :meth:`DebatePolicy.max_calls`, and tokens never pass :attr:`token_ceiling`.
"""

from typing import Annotated, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from policies.config_section import ConfigSection, Switch
from policies.config_wording import Shape
from policies.defaults import (
    BUDGET_FLOOR,
    INITIAL_BUDGET,
    MAX_ROUNDS,
    MAX_ROUNDS_LIMIT,
    TOKEN_CEILING,
    TOKEN_CEILING_FLOOR,
)
from policies.globs import listed_globs, plain_globs
from policies.panel import MAX_TESTERS, Focus, Panel, Topology
from policies.safety import ALWAYS_PROTECTED


def _disagreement(policy: "DebatePolicy", larger: str, smaller: str) -> PydanticCustomError:
    """The error of two limits in the wrong order, naming both (in `fields`, for whoever
    says it in other words: the command's options)."""
    return PydanticCustomError(
        "limits_order",
        "{larger} ({larger_value}) is less than {smaller} ({smaller_value})",
        {
            "fields": (larger, smaller),
            "larger": larger,
            "smaller": smaller,
            "larger_value": f"{getattr(policy, larger):,}",
            "smaller_value": f"{getattr(policy, smaller):,}",
        },
    )


def _with_always_protected(globs: tuple[str, ...]) -> tuple[str, ...]:
    listed_globs(globs)  # each glob refused at its own index, as written
    protected = (*ALWAYS_PROTECTED, *(g for g in globs if g not in ALWAYS_PROTECTED))
    # Checked whole, as the debate compiles it: the check leaves it compiled for the debate.
    plain_globs(protected)
    return protected


class DebatePolicy(ConfigSection):
    """Limits of one review's debates. Defaults suit a typical pull request.

    Token figures are billed tokens: input-token equivalents as the API prices them (a cache
    read costs a tenth of an input token, a cache write 1.25), so caching stretches budgets
    exactly as far as it stretches the bill.
    """

    max_rounds: int = Field(default=MAX_ROUNDS, ge=1, le=MAX_ROUNDS_LIMIT)
    """Rounds of coder answers and tester evaluations before open findings go to the arbiter."""

    convergence_threshold: int = Field(default=3, ge=1, le=50)
    """Consecutive quiet rounds (no new finding, none closed, open diff not shrinking) after
    which the debate has converged and its remaining disputes go to the arbiter."""

    max_findings_per_turn: int = Field(default=8, ge=1, le=100)
    """Proposal budget per tester turn: findings beyond it are dropped, highest severity kept."""

    max_findings_total: int = Field(default=20, ge=1, le=500)
    """Proposal budget per tester over the whole debate."""

    max_exchanges_per_finding: int = Field(default=3, ge=1, le=50)
    """Rejected answers on one finding before it goes to the arbiter."""

    max_retries: int = Field(default=3, ge=2, le=20)
    """Times one normalised message may be seen on an edge and finding before it is a loop."""

    max_turn_attempts: int = Field(default=2, ge=1, le=5)
    """Attempts an agent gets for one turn when its tool input is malformed or invalid."""

    max_output_tokens: int = Field(default=4096, ge=256, le=16_000)
    """Output tokens one call may produce."""

    initial_budget: int = Field(default=INITIAL_BUDGET, ge=BUDGET_FLOOR)
    """Starting token budget of each coder-tester edge."""

    budget_growth: float = Field(default=1.5, ge=1.0, le=4.0)
    """Factor by which an edge's budget grows when its open diff shrinks to nothing; a partial
    shrink earns a proportional part of that growth."""

    budget_cap: int = Field(default=240_000, ge=1_000)
    """Largest budget an edge can grow to."""

    arbiter_budget: int = Field(default=60_000, ge=1_000)
    """Token budget of each edge to the arbiter."""

    token_ceiling: int = Field(default=TOKEN_CEILING, ge=TOKEN_CEILING_FLOOR)
    """Hard ceiling on the tokens one review may spend, across all its units."""

    protected_paths: Annotated[
        tuple[str, ...],
        AfterValidator(_with_always_protected),
        Shape("a list of globs (gitignore-style, such as 'src/**')"),
    ] = ALWAYS_PROTECTED
    """Gitignore-style globs of paths no patch may touch. The default ones are always among
    them: everything that runs in CI with the repository's secrets (workflows, actions and an
    `action.yml` anywhere, other CI services' files, dev containers, pre-commit hooks), what
    changes what a build fetches (`.gitmodules`, Dependabot's and Renovate's config),
    `CODEOWNERS` and Tiebreak's own config."""

    arbitration: Switch = True
    """Whether deadlocks go to the arbiter; when off they end unresolved."""

    testers: int = Field(default=1, ge=1, le=MAX_TESTERS)
    """Testers reviewing each unit. One reviews everything; a panel of two to five reviews
    with one focus each, and a finding is settled by the panel's majority (an even split goes
    to the arbiter). A panel costs more: each tester reports and votes every round."""

    focus: tuple[Focus, ...] = ()
    """Each tester's focus, in order. Testers without one get the next of correctness,
    security, performance, concurrency and error_handling; a single tester without one
    reviews everything (`general`)."""

    topology: Topology = Topology.RING
    """Whom each tester of a panel hears every round: `ring`, its two neighbours, or `full`,
    every other tester. A ring is cheaper and votes more locally: a finding is voted on by
    its raiser and the raiser's neighbours first, and reaches the others one neighbour per
    round only while it stays disputed."""

    @model_validator(mode="after")
    def _budgets_are_ordered(self) -> Self:
        if self.budget_cap < self.initial_budget:
            raise _disagreement(self, "budget_cap", "initial_budget")
        if self.max_findings_total < self.max_findings_per_turn:
            raise _disagreement(self, "max_findings_total", "max_findings_per_turn")
        if len(self.focus) > self.testers:
            raise PydanticCustomError(
                "focus_count",
                "focus names {focuses} focuses for {testers} tester{s}",
                {
                    "fields": ("focus", "testers"),
                    "focuses": len(self.focus),
                    "testers": self.testers,
                    "s": "" if self.testers == 1 else "s",
                },
            )
        if twice := next((f for f in self.focus if self.focus.count(f) > 1), None):
            raise PydanticCustomError(
                "focus_twice",
                "focus names '{focus}' twice: each tester needs its own focus",
                {"fields": ("focus",), "focus": str(twice)},
            )
        return self

    def panel(self) -> Panel:
        """The testers of each debate, and whom each of them hears."""
        return Panel.of(self.testers, self.focus, self.topology)

    def max_calls(self, retests: int = 0) -> int:
        """Upper bound on model calls in one debate, derived from the limits.

        A seed turn per tester, then per round at most one coder turn, one turn per tester
        and one arbitration (the last round's arbitration settles everything still open);
        each turn may take `max_turn_attempts` calls. When findings' tests are run, a
        tester's findings whose tests pass at the head get it one more turn after each of its
        turns, up to `retests` times (the tests a finding may have beyond its first).
        """
        turns = self.testers + (self.testers + 2) * self.max_rounds
        turns += self.testers * (1 + self.max_rounds) * retests
        return turns * self.max_turn_attempts
