"""The root of Tiebreak's error hierarchy, and the errors the policies raise.

Every error Tiebreak raises on purpose derives from :class:`TiebreakError`, so the two places
allowed to catch broadly (the webhook endpoint and the job wrapper) can tell ours from a bug.

    TiebreakError
    ├── PolicyError            a policy refuses something
    │   ├── BudgetExhausted    a pairwise edge has no tokens left: its disputes go to the arbiter
    │   └── CeilingReached     the hard per-review token ceiling would be crossed: stop calling
    ├── agents.errors.*        the debate's own errors (malformed diff, model failures)
    └── app errors             the GitHub side
"""


class TiebreakError(Exception):
    """Root of every error Tiebreak raises deliberately."""


class PolicyError(TiebreakError):
    """A policy refused an action."""


class BudgetExhausted(PolicyError):
    """An edge's pairwise token budget is spent (or was dropped to zero by a repeated answer)."""

    def __init__(self, edge: str, spent: int, limit: int) -> None:
        super().__init__(f"budget of edge {edge} exhausted: {spent} of {limit} tokens spent")
        self.edge = edge
        self.spent = spent
        self.limit = limit


class CeilingReached(PolicyError):
    """The next call could take the review past its hard token ceiling."""

    def __init__(self, spent: int, needed: int, ceiling: int) -> None:
        super().__init__(
            f"token ceiling reached: {spent} spent, next call may need {needed}, ceiling {ceiling}"
        )
        self.spent = spent
        self.needed = needed
        self.ceiling = ceiling
