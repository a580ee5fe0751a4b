"""The root of Tiebreak's error hierarchy, and the errors the policies raise.

Every error Tiebreak raises on purpose derives from :class:`TiebreakError`, so the two places
allowed to catch broadly (the webhook endpoint and the job wrapper) can tell ours from a bug.

    TiebreakError
    ├── PolicyError            a policy refuses something
    │   ├── BudgetExhausted    a pairwise edge has no tokens left: its disputes go to the arbiter
    │   └── OutOfTokens        the next call could cross a hard token limit: stop calling
    │       ├── CeilingReached         the review's own ceiling
    │       └── AllowanceExhausted     the allowance its installation's reviews share (daily cap)
    ├── agents.errors.*        the debate's own errors (malformed diff, model failures)
    └── app errors             the GitHub side; findings' tests: a tree or file refused
                               (TreeRefused), no sandbox on the machine (SandboxUnavailable);
                               a repository's snapshot not kept (SnapshotRefused)
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


class OutOfTokens(PolicyError):
    """The next call may not be made: it could cross a hard token limit."""

    def __init__(self, message: str, needed: int) -> None:
        super().__init__(message)
        self.needed = needed


class CeilingReached(OutOfTokens):
    """The next call could take the review past its hard token ceiling."""

    def __init__(self, spent: int, reserved: int, needed: int, ceiling: int) -> None:
        # The message names the ceiling alone: what was spent is a review's total, said once
        # where the review ends, and a figure here would count the reservations of the calls
        # under way too (upper estimates, settled lower), which no total shows.
        super().__init__(
            f"token ceiling reached: the review's {ceiling:,} billed tokens cannot cover "
            "another call",
            needed,
        )
        self.spent = spent
        """Billed tokens of the calls that ended."""
        self.reserved = reserved
        """Tokens held for the calls under way, each at its upper estimate."""
        self.ceiling = ceiling


class AllowanceExhausted(OutOfTokens):
    """The next call could take the installation past the allowance its reviews share."""

    def __init__(self, needed: int) -> None:
        super().__init__(
            f"daily token allowance reached: the next call may need {needed} tokens", needed
        )
