"""Per-agent proposal budgets: how many findings one tester may raise, per turn and in total."""


class ProposalBudget:
    """Admits a tester's findings up to its per-turn and total allowance."""

    def __init__(self, *, per_turn: int, total: int) -> None:
        self.per_turn = per_turn
        self.total = total
        self._used = 0

    @property
    def remaining(self) -> int:
        return self.total - self._used

    def allowance(self) -> int:
        """How many findings the next turn may raise."""
        return min(self.per_turn, self.remaining)

    def admit(self, proposed: int) -> int:
        """Consume the allowance for `proposed` findings; return how many are admitted."""
        admitted = min(proposed, self.allowance())
        self._used += admitted
        return admitted

    def turn(self) -> "TurnProposals":
        """The allowance of one turn, over however many attempts it takes."""
        return TurnProposals(self)


class TurnProposals:
    """One turn's share of a tester's proposal budget: what the turn's earlier attempts
    raised counts against its per-turn allowance, so a retry cannot raise a turn's worth more."""

    def __init__(self, budget: ProposalBudget) -> None:
        self.budget = budget
        self.admitted = 0

    def allowance(self) -> int:
        return min(self.budget.per_turn - self.admitted, self.budget.remaining)

    def admit(self, proposed: int) -> int:
        admitted = self.budget.admit(min(proposed, self.allowance()))
        self.admitted += admitted
        return admitted
