"""The debate engine: one review unit, from the tester's seed to every finding's end.

Sans-I/O: the engine talks only to the injected :class:`LLMClient`. Who speaks next, when
a dispute goes to the arbiter and when the debate ends are decided here and in `policies`,
never by a model. Whatever the models answer, a debate ends within
`DebatePolicy.max_calls()` calls and under the review's token ceiling, and every finding
ends with exactly one consensus type.
"""

from collections.abc import Collection

from agents.debate_run import DebateRun
from agents.diff import ReviewUnit
from agents.hearing import Hearing, PersonReply, Verdict
from agents.journal import Journal, Replay
from agents.llm import LLMClient
from agents.outcome import Outcome
from agents.proofs import Proving
from policies.budget import TokenCeiling
from policies.config import Models
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig


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
    ) -> None:
        self.llm = llm
        self.policy = policy or DebatePolicy()
        self.ceiling = ceiling or TokenCeiling(self.policy.token_ceiling)
        """Shared by every unit this instance debates: the review's hard ceiling."""
        self.proving = proving
        """Who runs the findings' tests, if anyone (`agents.proofs`)."""
        self.models = models
        """The repository's choice of model for each role, where it made one (the client's
        own for the others)."""
        self.summary = summary
        """What each unit's first report is asked to describe (None: no walkthrough)."""

    async def run(self, unit: ReviewUnit, *, journal: Journal | None = None) -> Outcome:
        """Debate `unit`. With a `journal`, the calls it holds (a crashed attempt's) are
        replayed rather than paid for again, and every live call is appended to it."""
        replay = None if journal is None else await Replay.open(journal)
        return await self._run(unit, replay, self.summary).run()

    async def report(self, unit: ReviewUnit) -> Outcome:
        """Only the testers' reports on `unit`, without a debate: each finding ends open
        (`unresolved`). What a one-pass reviewer would post, for comparison with a debate."""
        return await self._run(unit).report()

    async def arbitrate(
        self, unit: ReviewUnit, outcome: Outcome, finding_ids: Collection[str]
    ) -> Outcome:
        """Send unresolved findings of a finished debate to the arbiter now, because a person
        asked; every other finding keeps its end. Returns the debate's new outcome."""
        return await self._run(unit).arbitrate_requested(outcome, finding_ids)

    async def hear(
        self, unit: ReviewUnit, outcome: Outcome, finding_id: str, reply: PersonReply
    ) -> tuple[Outcome, Verdict]:
        """Hear a person's reply on an open finding of a finished debate: the tester accepts
        it (the finding is withdrawn) or rejects it (it stands). Raises
        :class:`agents.errors.NotHeard` when it could not be weighed."""
        hearing = Hearing(self.llm, self.policy, self.ceiling, unit, models=self.models)
        return await hearing.hear(outcome, finding_id, reply)

    def _run(
        self,
        unit: ReviewUnit,
        replay: Replay | None = None,
        summary: SummaryConfig | None = None,
    ) -> DebateRun:
        return DebateRun(
            self.llm, self.policy, self.ceiling, unit, replay, self.proving, self.models, summary
        )
