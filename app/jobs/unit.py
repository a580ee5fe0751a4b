"""The unit job: one attempt at one review unit's debate, on whichever worker picks it up.

    its unit's plan (from the coordinator) → heartbeat → initializing → active (the debate,
    replaying the unit's journal first) → completing → outcome saved → complete

A unit job never publishes: it leaves its outcome in Redis and wakes its coordinator. An
attempt that is no longer the unit's current one (the coordinator gave up on it and started a
fresh one) does nothing. A failure is recorded for the coordinator, which decides whether a
fresh attempt follows; a fatal model error (a bad key) is marked so that none does.
"""

import logging
from typing import Any

from agents.engine import Debate
from agents.errors import LLMFatal
from agents.llm import LLMClient, LLMRequest, LLMResponse, Role
from agents.outcome import Outcome
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.failures import logged_reason, public_reason
from app.store.live import STARTED, LiveRuns, State, worker_name
from app.store.plans import UnitPlan
from app.telemetry.debates import record_outcome
from app.telemetry.logs import bind, log_context
from policies.budget import AllOf, TokenCeiling

log = logging.getLogger(__name__)

DEBATERS = (Role.TESTER, Role.CODER)
"""The agents a debate starts with; the arbiter waits until it is needed."""


async def debate_unit(ctx: dict[str, Any], run_id: str, number: int, attempt: int) -> str:
    """arq's entry point: debate unit `number` of run `run_id`, as attempt `attempt`."""
    return await UnitRun(deps_of(ctx), run_id, number, attempt).run()


class UnitRun:
    def __init__(self, deps: WorkerDeps, run_id: str, number: int, attempt: int) -> None:
        self.deps = deps
        self.live = deps.live_runs()
        self.run_id = run_id
        self.number = number
        self.attempt = attempt

    async def run(self) -> str:
        with log_context(run_id=self.run_id, unit=self.number):
            return await self._run()

    async def _run(self) -> str:
        live, run, n = self.live, self.run_id, self.number
        # The unit's own key, the size of its unit: never the whole pull request's plan.
        plan = await live.unit_plan(run, n)
        if plan is None:
            return "the run has ended"
        bind(repository=plan.ref.full_name, pull_number=plan.ref.number)
        current = await live.unit(run, n)
        if current.attempt != self.attempt:
            return f"attempt {self.attempt} was given up for attempt {current.attempt}"
        if current.state in (State.COMPLETE, State.FAILED):
            return f"attempt {self.attempt} has ended ({current.state})"
        if current.state in STARTED and await live.unit_alive(run, n, self.attempt):
            return f"attempt {self.attempt} is running on {current.worker}"
        async with live.beating_unit(run, n, self.attempt):
            agents = {f"agent:{role}": State.INITIALIZING for role in DEBATERS}
            await live.set_unit(
                run,
                n,
                state=State.INITIALIZING,
                worker=worker_name(),
                **agents,
                **{f"agent:{Role.ARBITER}": State.WAITING},
            )
            try:
                outcome = await self._debate(plan)
            except LLMFatal as exc:
                await self._failed(str(exc), fatal=True)
                return f"failed: {exc}"
            except Exception as exc:
                # One of the two catch-alls of the fleet: the coordinator gets the reason and
                # decides whether a fresh attempt follows.
                log.exception("unit %s of %s failed", n, run)
                await self._failed(public_reason(exc))
                return f"failed: {logged_reason(exc)}"
            await live.set_unit(run, n, state=State.COMPLETING)
            if await live.save_outcome(run, n, outcome):
                # Counted by the attempt whose outcome is kept: a retried unit counts once.
                record_outcome(self.deps.metrics, outcome)
            await live.set_unit(
                run,
                n,
                state=State.COMPLETE,
                round=outcome.rounds,
                calls=outcome.calls,
                **{f"agent:{role}": State.COMPLETE for role in Role},
            )
        return str(outcome.stop)

    async def _debate(self, plan: UnitPlan) -> Outcome:
        live, run, n = self.live, self.run_id, self.number
        unit = plan.review_unit()
        journal = live.journal(run, n)
        recorded = await journal.entries()
        tokens = sum(e.response.usage.billed for e in recorded if e.response)
        allowance = AllOf(
            live.ceiling(run, plan.policy.token_ceiling),
            self.deps.allowance(plan.ref.installation_id),
        )
        ceiling = TokenCeiling(plan.policy.token_ceiling, allowance)
        llm = Tracked(self.deps.llm_for(plan.models), live, run, n)
        llm.tokens, llm.calls = tokens, len(recorded)
        await live.set_unit(run, n, state=State.ACTIVE, tokens=tokens, replayed=len(recorded))
        return await Debate(llm, plan.policy, ceiling=ceiling).run(unit, journal=journal)

    async def _failed(self, error: str, *, fatal: bool = False) -> None:
        live, run, n = self.live, self.run_id, self.number
        await live.set_unit(run, n, state=State.FAILED, error=error[:500], fatal=fatal)
        for role in Role:
            await live.set_agent(run, n, role, State.FAILED)
        await live.signal(run, n)


class Tracked:
    """A model client that keeps a unit's agents' states, round and tokens in Redis."""

    def __init__(self, llm: LLMClient, live: LiveRuns, run: str, number: int) -> None:
        self.llm = llm
        self.live = live
        self.run = run
        self.number = number
        self.tokens = 0
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        live, run, n = self.live, self.run, self.number
        await live.set_unit(run, n, round=request.round, **{f"agent:{request.role}": State.ACTIVE})
        try:
            response = await self.llm.complete(request)
        except BaseException:
            await live.set_agent(run, n, request.role, State.WAITING)
            raise
        self.tokens += response.usage.billed
        self.calls += 1
        waiting = {f"agent:{request.role}": State.WAITING}
        await live.set_unit(run, n, tokens=self.tokens, calls=self.calls, **waiting)
        return response
