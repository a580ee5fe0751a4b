"""The step that ends a debate on findings: by the testers' votes where they decide it, else
by the arbiter's binding ruling, else left unresolved with the reason."""

from collections.abc import Sequence

from agents.debate import briefs
from agents.debate.findings import accept, leave_unresolved, rule, stand
from agents.debate.needs import Steps
from agents.debate.proving import ProofSteps
from agents.debate.state import ARBITER, DebateState
from agents.debate.threads import Thread
from agents.debate.turns import Ask
from agents.models.llm import Role
from agents.outcome import SYSTEM_SPEAKER, MessageKind
from agents.protocol import Arbitrate, ToolName
from policies.arbitration import ArbitrationTrigger
from policies.budget import edge_name
from policies.errors import BudgetExhausted
from policies.panel import PanelVerdict

Batch = Sequence[tuple[Thread, ArbitrationTrigger]]


class Arbitration:
    """Settles findings whose debate must end now, calling the arbiter where it must."""

    def __init__(self, state: DebateState, proving: ProofSteps) -> None:
        self.state = state
        self.proving = proving

    def settle(self, batch: Batch, *, ceiling: str | None = None) -> Steps[None]:
        """End the debate on each finding of `batch`, for its trigger: by the testers' latest
        votes where they decide it, else by the arbiter (or, past the review's token
        `ceiling`, left unresolved with that reason)."""
        deadlocked = []
        for thread, trigger in batch:
            tally = thread.tally()
            if thread.answer is None:  # raised, never answered: nothing was voted on
                deadlocked.append((thread, trigger))
            elif tally.verdict is PanelVerdict.ACCEPTED:
                accept(self.state, thread, tally)
            elif tally.verdict is PanelVerdict.STANDS:
                stand(self.state, thread, tally, trigger)
            else:
                deadlocked.append((thread, trigger))
        if ceiling is not None:
            for thread, trigger in deadlocked:
                leave_unresolved(self.state, [thread], trigger, ceiling)
        else:
            yield from self.arbitrate(deadlocked)

    def arbitrate(self, batch: Batch) -> Steps[None]:
        """Send `batch` to the arbiter; what it does not rule on is left unresolved."""
        if not batch:
            return
        state = self.state
        for thread, trigger in batch:
            thread.trigger = trigger
            if thread.loop is not None:
                state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, thread.loop.describe())
        threads = [t for t, _ in batch]
        if not state.policy.arbitration:
            leave_unresolved(state, threads, None, "arbitration is turned off")
            return
        try:
            end = yield from state.turns.run(self._ask(batch), state.checks.rulings, self._ruled)
        except BudgetExhausted as exc:
            unruled = [t for t in threads if t.is_open]
            leave_unresolved(state, unruled, None, f"the arbiter could not rule: {exc}")
            return
        # A forced fix is binding; its test, run with it, is on the record.
        yield from self.proving.check_fixes(
            [(t, t.closure.patch) for t in threads if t.closure and t.closure.patch]
        )
        if not end.adopted:
            leave_unresolved(state, threads, None, "the arbiter's call failed")
            return
        for thread in threads:
            if not thread.is_open:
                continue
            if thread.id in end.refused:
                leave_unresolved(state, [thread], None, "the arbiter's ruling on it was refused")
            else:
                leave_unresolved(state, [thread], None, "the arbiter gave no ruling on it")

    def _ask(self, batch: Batch) -> Ask:
        state = self.state
        threads = [t for t, _ in batch]
        blocks = [
            *state.briefs,
            briefs.arbitration_brief(
                batch,
                state.policy.protected_paths,
                panel=state.panel if state.panel.is_panel else None,
                tests=state.proofs.about_tests,
            ),
        ]
        return Ask(
            Role.ARBITER,
            ToolName.ARBITRATE,
            blocks,
            edges=lambda asked: [
                state.budgets[edge_name(ARBITER, party)]
                for party in state.parties([t for t in threads if t.id in asked])
            ],
            round=state.round,
            subject=tuple(t.id for t in threads),
        )

    def _ruled(self, result: Arbitrate) -> None:
        for ruling in result.rulings:
            rule(self.state, self.state.threads[ruling.finding_id], ruling)
