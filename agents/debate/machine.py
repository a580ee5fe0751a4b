"""The debate over one review unit, as a machine that says what it needs and never awaits.

Given what happened — a model's answer, a test's result — the machine returns what it needs
next (:mod:`agents.debate.needs`): ask this role with this request, run these tests, or
nothing more, with the outcome. One state (:class:`agents.debate.state.DebateState`) is taken
by the steps that make a debate, composed: the rounds, the findings' tests, the arbitration,
the hearing of a person's reply. A driver performs the needs: the engine's
(:mod:`agents.debate.driver`) for the worker, `tiebreak review` and `tiebreak eval`; a test's
loop over canned answers, with no event loop at all.

Deterministic given what happened: fed the same answers and results, a machine asks the same
things and comes to the same outcome. A unit of the App that stopped to wait for its tests
is resumed that way, its journal and its recorded test runs answering what it asks again.
"""

from collections.abc import Collection

from agents.debate.arbitration import Arbitration
from agents.debate.ending import outcome_of, restore, restore_intents
from agents.debate.hearing import Hearing, PersonReply, Verdict
from agents.debate.needs import Steps
from agents.debate.proofs import ProofTerms
from agents.debate.proving import ProofSteps
from agents.debate.rounds import Rounds
from agents.debate.state import DebateState
from agents.diff import ReviewUnit
from agents.outcome import Outcome
from policies.config import Models
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig


class DebateMachine:
    """One debate over `unit`; each way in is a generator of needs, returning what it came to."""

    def __init__(
        self,
        policy: DebatePolicy,
        unit: ReviewUnit,
        *,
        terms: ProofTerms | None = None,
        models: Models | None = None,
        summary: SummaryConfig | None = None,
    ) -> None:
        self.state = DebateState.start(policy, unit, terms=terms, models=models, summary=summary)
        self.proving = ProofSteps(self.state)
        self.arbitration = Arbitration(self.state, self.proving)
        self.rounds = Rounds(self.state, self.proving, self.arbitration)

    def run(self) -> Steps[Outcome]:
        """The whole debate: the testers' seed, the rounds, every finding to its end."""
        yield from self.rounds.run()
        return outcome_of(self.state)

    def report(self) -> Steps[Outcome]:
        """Only the testers' reports, without a debate: each finding ends open."""
        yield from self.rounds.report()
        return outcome_of(self.state)

    def arbitrate(self, outcome: Outcome, finding_ids: Collection[str]) -> Steps[Outcome]:
        """Send unresolved findings of the finished debate `outcome` to the arbiter now (all
        of them if `finding_ids` is empty); every other finding keeps its end."""
        restore(self.state, outcome)
        restore_intents(self.state)
        yield from self.rounds.arbitrate_requested(finding_ids)
        return outcome_of(self.state)

    def hear(
        self, outcome: Outcome, finding_id: str, reply: PersonReply
    ) -> Steps[tuple[Outcome, Verdict]]:
        """Hear a person's reply on an open finding of the finished debate `outcome`."""
        restore(self.state, outcome)
        verdict = yield from Hearing(self.state).hear(finding_id, reply)
        return outcome_of(self.state), verdict
