"""The debate engine: one review unit, from the tester's seed to every finding's end.

The way in for the worker, `tiebreak review`, `tiebreak eval` and the tests: each debate is
a :class:`agents.debate.machine.DebateMachine`, performed by a
:class:`agents.debate.driver.Driver` with the injected :class:`LLMClient`. Who speaks next,
when a dispute goes to the arbiter and when the debate ends are decided by the machine and
`policies`, never by a model. Whatever the models answer, a debate ends within
`DebatePolicy.max_calls()` calls and under the review's token ceiling, and every finding
ends with exactly one consensus type.
"""

from collections.abc import Collection
from typing import TypeVar

from agents.debate.driver import Asking, Driver, LocalTrials, Waiting
from agents.debate.hearing import PersonReply, Verdict
from agents.debate.journal import Journal, Replay
from agents.debate.machine import DebateMachine
from agents.debate.needs import Steps
from agents.debate.proofs import ProofTerms, Proving
from agents.debate.recorded_tests import RecordedRuns, RecordedTrials, TrialsElsewhere
from agents.diff import ReviewUnit
from agents.models.llm import LLMClient
from agents.outcome import Outcome
from policies.budget import TokenCeiling
from policies.config import Models
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig

R = TypeVar("R")


class Debate:
    """Runs the coder/tester/arbiter debate over review units with one LLM client."""

    def __init__(
        self,
        llm: LLMClient,
        policy: DebatePolicy | None = None,
        *,
        ceiling: TokenCeiling | None = None,
        proving: Proving | None = None,
        models: Models | None = None,
        summary: SummaryConfig | None = None,
        asking: Asking | None = None,
    ) -> None:
        self.llm = llm
        self.policy = policy or DebatePolicy()
        self.ceiling = ceiling or TokenCeiling(self.policy.token_ceiling)
        """Shared by every unit this instance debates: the review's hard ceiling."""
        self.proving = proving
        """Who runs the findings' tests here, if anyone."""
        self.models = models
        """The repository's choice of model for each role, where it made one (the client's
        own for the others)."""
        self.summary = summary
        """What each unit's walkthrough, asked of its first report, holds (None: no walkthrough)."""
        self.asking = asking
        """Told of each call made live, before it is reserved on the ceiling."""

    async def run(self, unit: ReviewUnit, *, journal: Journal | None = None) -> Outcome:
        """Debate `unit`. With a `journal`, the calls it holds (a crashed attempt's) are
        answered from it rather than paid for again, and every live call is appended to it."""
        terms = self.proving.terms if self.proving else None
        machine = self._machine(unit, terms, self.summary)
        tests = LocalTrials(self.proving.verifier) if self.proving else None
        return _done(await self._drive(machine.run(), journal, tests))

    async def advance(
        self,
        unit: ReviewUnit,
        *,
        journal: Journal,
        elsewhere: TrialsElsewhere,
        record: RecordedRuns,
        max_attempts: int,
    ) -> Outcome | Waiting:
        """Debate `unit` with its findings' tests run `elsewhere`: as far as the results
        `record` holds allow. Its outcome; or, once it asked for runs not recorded yet (each
        started first), :class:`Waiting` for them — to be advanced again, by any process,
        once they are recorded."""
        machine = self._machine(unit, ProofTerms(elsewhere.command, max_attempts), self.summary)
        return await self._drive(machine.run(), journal, RecordedTrials(elsewhere, record))

    async def report(self, unit: ReviewUnit) -> Outcome:
        """Only the testers' reports on `unit`, without a debate: each finding ends open
        (`unresolved`). What a one-pass reviewer would post, for comparison with a debate."""
        terms = self.proving.terms if self.proving else None
        tests = LocalTrials(self.proving.verifier) if self.proving else None
        return _done(await self._drive(self._machine(unit, terms).report(), None, tests))

    async def arbitrate(
        self, unit: ReviewUnit, outcome: Outcome, finding_ids: Collection[str]
    ) -> Outcome:
        """Send unresolved findings of a finished debate to the arbiter now, because a person
        asked; every other finding keeps its end. Returns the debate's new outcome."""
        terms = self.proving.terms if self.proving else None
        tests = LocalTrials(self.proving.verifier) if self.proving else None
        machine = self._machine(unit, terms)
        return _done(await self._drive(machine.arbitrate(outcome, finding_ids), None, tests))

    async def hear(
        self, unit: ReviewUnit, outcome: Outcome, finding_id: str, reply: PersonReply
    ) -> tuple[Outcome, Verdict]:
        """Hear a person's reply on an open finding of a finished debate: the tester accepts
        it (the finding is withdrawn) or rejects it (it stands). Raises
        :class:`agents.errors.NotHeard` when it could not be weighed."""
        machine = self._machine(unit, None)
        return _done(await self._drive(machine.hear(outcome, finding_id, reply), None, None))

    def _machine(
        self, unit: ReviewUnit, terms: ProofTerms | None, summary: SummaryConfig | None = None
    ) -> DebateMachine:
        return DebateMachine(self.policy, unit, terms=terms, models=self.models, summary=summary)

    async def _drive(
        self,
        steps: Steps[R],
        journal: Journal | None,
        tests: LocalTrials | RecordedTrials | None,
    ) -> R | Waiting:
        replay = None if journal is None else await Replay.open(journal)
        driver = Driver(self.llm, self.ceiling, replay=replay, tests=tests, asking=self.asking)
        return await driver.drive(steps)


def _done(result: R | Waiting) -> R:
    """What a debate whose tests run here came to: it never waits."""
    if isinstance(result, Waiting):
        raise TypeError("a debate whose tests run here waited for them")
    return result
