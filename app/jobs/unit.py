"""The unit job: one attempt at one review unit's debate, on whichever worker picks it up.

    its unit's plan, status and journal (from the coordinator, or a dead attempt) → heartbeat
    and active, its agents initializing until each first speaks (the debate, replaying the
    unit's journal first) → outcome saved and complete

A unit job never publishes: it leaves its outcome in Redis and wakes its coordinator. An
attempt that is no longer the unit's current one (the coordinator gave up on it and started a
fresh one) does nothing. A failure is recorded for the coordinator, which decides whether a
fresh attempt follows; a fatal model error (a bad key) is marked so that none does. What the
attempt reads and writes, and in how few round trips: :mod:`app.store.unit_writes`.

A debate whose findings' tests run in the repository's Actions waits once they are
dispatched: the attempt ends with the unit `testing`, and the same attempt is queued again
when their results are in (:mod:`app.jobs.workflow_results`); one job takes it up, and its
journal and recorded test runs answer what the debate asks again up to where it stopped.
"""

import hashlib
import logging
from collections.abc import Sequence
from typing import Any

from agents.debate.driver import Waiting
from agents.debate.engine import Debate
from agents.errors import LLMFatal, LLMUnavailable
from agents.models.llm import LLMClient, LLMRequest, LLMResponse, Role
from agents.outcome import Outcome
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.job_results import JobResult
from app.review.actions_trials import ActionsTrials
from app.review.failures import logged_reason, public_reason
from app.store.ceiling_line import RunPools
from app.store.live import worker_name
from app.store.plans import UnitPlan
from app.store.records import STARTED, State, UnitStatus
from app.store.unit_writes import UnitWrites
from app.store.workflow_runs import UnitTestRuns, WorkflowRuns
from app.telemetry.debates import record_outcome
from app.telemetry.logs import bind, log_context
from policies.budget import TokenCeiling

log = logging.getLogger(__name__)

DEBATERS = (Role.TESTER, Role.CODER)
"""The agents a debate starts with; the arbiter waits until it is needed."""


async def debate_unit(ctx: dict[str, Any], run_id: str, number: int, attempt: int) -> JobResult:
    """arq's entry point: debate unit `number` of run `run_id`, as attempt `attempt`."""
    return await UnitRun(deps_of(ctx), run_id, number, attempt).run()


class UnitRun:
    def __init__(self, deps: WorkerDeps, run_id: str, number: int, attempt: int) -> None:
        self.deps = deps
        self.live = deps.live_runs()
        self.writes = UnitWrites(self.live, run_id, number, attempt)
        self.run_id = run_id
        self.number = number
        self.attempt = attempt

    async def run(self) -> JobResult:
        with log_context(run_id=self.run_id, unit=self.number):
            return await self._run()

    async def _run(self) -> JobResult:
        writes, run, n = self.writes, self.run_id, self.number
        # The unit's own key, the size of its unit: never the whole pull request's plan.
        start = await writes.read()
        plan, current = start.plan, start.status
        if plan is None:
            return JobResult.completed("the run has ended")
        bind(repository=plan.ref.full_name, pull_number=plan.ref.number)
        if current.attempt != self.attempt:
            return JobResult.completed(
                f"attempt {self.attempt} was given up for attempt {current.attempt}"
            )
        if current.state in (State.COMPLETE, State.FAILED):
            return JobResult.completed(f"attempt {self.attempt} has ended ({current.state})")
        if current.state in STARTED and start.beating == str(self.attempt):
            return JobResult.completed(f"attempt {self.attempt} is running on {current.worker}")
        if current.state is State.TESTING and not await self._take_up():
            return JobResult.completed(f"attempt {self.attempt} was taken up already")
        tokens = sum(e.response.usage.billed for e in start.recorded if e.response)
        started = UnitStatus(
            number=n,
            state=State.ACTIVE,
            worker=worker_name(),
            tokens=tokens,
            agents={**dict.fromkeys(DEBATERS, State.INITIALIZING), Role.ARBITER: State.WAITING},
        )
        # A fresh attempt's first call writes its start with its reservation; one that replays
        # its journal first (no reservation until it has) writes it at once.
        async with writes.running(started, at_once=bool(start.recorded)):
            try:
                outcome = await self._debate(plan, tokens, len(start.recorded))
            except LLMFatal as exc:
                await self._failed(str(exc), fatal=True)
                return JobResult.failed(str(exc))
            except Exception as exc:
                # One of the two catch-alls of the fleet: the coordinator gets the reason and
                # decides whether a fresh attempt follows.
                log.exception("unit %s of %s failed", n, run)
                await self._failed(public_reason(exc))
                return JobResult.failed(logged_reason(exc))
            if isinstance(outcome, Waiting):
                await self._wait_for_tests(outcome.runs)
                return JobResult.completed(str(outcome))
            complete = UnitStatus(
                number=n,
                state=State.COMPLETE,
                round=outcome.rounds,
                calls=outcome.calls,
                agents=dict.fromkeys(Role, State.COMPLETE),
            )
            kept = await writes.complete(outcome, complete)
            if kept:
                # Counted by the attempt whose outcome is kept: a retried unit counts once.
                record_outcome(self.deps.metrics, outcome)
        return JobResult.completed(str(outcome.stop))

    async def _debate(self, plan: UnitPlan, tokens: int, calls: int) -> Outcome | Waiting:
        live, writes = self.live, self.writes
        # The run's ceiling, waited for in turn, and the installation's day, reserved on and
        # settled together.
        allowance = RunPools(
            writes,
            live.ceiling(self.run_id, plan.policy.token_ceiling),
            self.deps.allowance(plan.ref.installation_id),
            place=writes.place(),
        )
        ceiling = TokenCeiling(plan.policy.token_ceiling, allowance)
        llm = Tracked(self.deps.counted_llm, writes)
        llm.tokens, llm.calls = tokens, calls

        def asking(request: LLMRequest) -> None:
            # Shown active by the reservation that lets the call start, in the same write.
            active = {request.role: State.ACTIVE}
            status = UnitStatus(number=self.number, round=request.round, agents=active)
            allowance.show(writes.shown(status))

        debate = Debate(
            llm,
            plan.policy,
            ceiling=ceiling,
            models=plan.models,
            summary=plan.summary,
            asking=asking,
        )
        if plan.tests is None:
            return await debate.run(plan.review_unit(), journal=writes.journal)
        # The unit's findings' tests run in the repository's Actions.
        github = self.deps.github.installation(plan.ref.installation_id)
        return await debate.advance(
            plan.review_unit(),
            journal=writes.journal,
            elsewhere=ActionsTrials(github, self.workflows, plan, self.attempt),
            record=UnitTestRuns(self.live.redis, self.run_id, self.number),
            max_attempts=plan.tests.max_attempts,
        )

    @property
    def workflows(self) -> WorkflowRuns:
        return self.deps.workflow_runs()

    async def _take_up(self) -> bool:
        return await self.workflows.take_up(self.run_id, self.number, self.attempt)

    async def _wait_for_tests(self, digests: Sequence[str]) -> None:
        """Leave the unit waiting for its tests (what the last call staged written with it);
        taken up again at once if their results came in meanwhile."""
        await self.writes.set(UnitStatus(number=self.number, state=State.TESTING))
        recorded = UnitTestRuns(self.live.redis, self.run_id, self.number)
        if await recorded.all_recorded(digests):
            resumed = resume_id(digests)
            await self.deps.queue.resume_unit(self.run_id, self.number, self.attempt, resumed)

    async def _failed(self, error: str, *, fatal: bool = False) -> None:
        await self.writes.fail(
            UnitStatus(
                number=self.number,
                state=State.FAILED,
                error=error[:500],
                fatal=fatal,
                agents=dict.fromkeys(Role, State.FAILED),
            )
        )


def resume_id(digests: Sequence[str]) -> str:
    """What names a unit's resumption after the runs `digests`, by itself."""
    return "self-" + hashlib.sha256(" ".join(sorted(digests)).encode()).hexdigest()[:16]


class Tracked:
    """A model client that keeps a unit's agents' states and tokens in Redis.

    An agent is shown active by its call's reservation (the debate tells the unit of each call
    before reserving it); what the call changed is staged, to be written with the journal
    entry the engine appends after every call (answered or refused by the API), in the same
    transaction."""

    def __init__(self, llm: LLMClient, writes: UnitWrites) -> None:
        self.llm = llm
        self.writes = writes
        self.tokens = 0
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        number, role = self.writes.number, request.role
        waiting = UnitStatus(number=number, agents={role: State.WAITING})
        try:
            response = await self.llm.complete(request)
        except LLMUnavailable:
            self.writes.stage(waiting)
            raise
        except BaseException:
            # Not journaled (the attempt is failing or cancelled): written at once.
            await self.writes.set(waiting)
            raise
        self.tokens += response.usage.billed
        self.calls += 1
        self.writes.stage(
            UnitStatus(
                number=number, tokens=self.tokens, calls=self.calls, agents={role: State.WAITING}
            )
        )
        return response
