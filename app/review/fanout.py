"""A review's units, spread over the fleet: enqueue one job per unit, wait, retry, collect.

The review job coordinates: it queues one `debate_unit` job per unit (any worker may run it),
then blocks on the run's wake-up list in Redis until every unit has an outcome. A unit that
failed, or whose heartbeat lapsed (its worker died), gets a fresh attempt — fresh agents,
resuming from the unit's journal — up to `max_attempts`; a unit that fails every attempt is
reported as not reviewed, never silently dropped. So does a unit waiting for a worker whose
job ended without starting it (aborted, say): none would ever take it up. A unit waiting for
its findings' tests (`testing`) is neither: it is taken up again if its results are all in and
no job did so. A fatal model error (a bad key) stops the review at once, as it would stop a
debate run in one process.

Everything the coordinator knows is in Redis, so a coordinator restarted on another worker
(arq runs again a job a shutdown cancelled; the janitor re-queues one whose heartbeat lapsed)
picks up the same run where it was, its units still queued or running as they were.
"""

import logging
import time

from agents.errors import LLMFatal
from agents.outcome import Outcome
from app.store.keys import unit_job_id
from app.store.live import LiveRuns
from app.store.plans import RunPlan
from app.store.queue import ReviewQueue
from app.store.records import STARTED, RunStatus, State, UnitStatus
from app.store.workflow_runs import WorkflowRuns

log = logging.getLogger(__name__)


class Fanout:
    def __init__(
        self,
        live: LiveRuns,
        queue: ReviewQueue,
        plan: RunPlan,
        *,
        max_attempts: int,
        fresh: bool = False,
    ) -> None:
        self.live = live
        self.queue = queue
        self.plan = plan
        self.max_attempts = max_attempts
        self.fresh = fresh
        """A run just planned, every unit at its first attempt; else one picked up, whose
        units' attempts are read."""

    async def start(self) -> None:
        """Queue each unit's current attempt (every first one, for a run just planned), then
        mark the run waiting for them."""
        live, run, units = self.live, self.plan.run_id, range(self.plan.units)
        # Queued again on a restart: arq keeps one job per id, so an attempt is queued once.
        if self.fresh:
            attempts = [(n, 1) for n in units]
        else:
            attempts = [(u.number, u.attempt) for u in await live.units(run, units)]
        await self.queue.enqueue_units(run, attempts)
        await live.set_run(run, RunStatus(state=State.WAITING))

    async def outcomes(self) -> list[Outcome]:
        """Every unit's outcome, in unit order, once each unit has finished or given up
        (:meth:`start` queued them)."""
        live, run = self.live, self.plan.run_id
        pending = set(range(self.plan.units))
        finished: dict[int, Outcome] = {}
        # A wake-up looks at the units that signalled, not at every unit still pending (that
        # would cost a review of n units n² reads); all of them are looked at every half
        # heartbeat, for a worker that died without a signal.
        looking, scan_at = sorted(pending), time.monotonic() + live.heartbeat / 2
        # The units a run just planned queued are waiting for the jobs :meth:`start` queued:
        # none is asked whether its job is still there before the first scan.
        queued_now = self.fresh
        while True:
            done = await live.outcomes(run, looking)
            finished.update(done)
            pending -= done.keys()
            for unit in await live.units(run, [n for n in looking if n in pending]):
                given_up = await self._check(unit, queued_now=queued_now)
                if given_up is not None:
                    finished[unit.number] = given_up
                    pending.discard(unit.number)
            if not pending:
                break
            left = scan_at - time.monotonic()
            ended = await live.wait(run, left) if left > 0 else []
            looking = sorted(pending.intersection(ended))
            if not ended:
                looking, scan_at = sorted(pending), time.monotonic() + live.heartbeat / 2
                queued_now = False
        return [finished[n] for n in range(self.plan.units)]

    async def _take_up_stalled(self, unit: UnitStatus) -> None:
        """Queue again a unit left testing whose tests' results are all in, should the job
        that settled the last one have died before it queued the unit (queued twice, it is
        taken up once: :meth:`app.store.workflow_runs.WorkflowRuns.take_up`)."""
        run = self.plan.run_id
        recorded = await WorkflowRuns(self.live.redis).stalled(run, unit.number)
        if recorded is not None:
            after = f"recorded-{recorded}"
            await self.queue.resume_unit(run, unit.number, unit.attempt, after)

    async def stop(self) -> None:
        """Abort the units still running or queued (the review failed, or was stopped or
        superseded)."""
        run = self.plan.run_id
        unfinished = [
            u
            for u in await self.live.units(run, range(self.plan.units))
            if u.state is not State.COMPLETE
        ]
        for unit in unfinished:
            await self.queue.abort(unit_job_id(run, unit.number, unit.attempt))

    async def _stranded(self, unit: UnitStatus) -> bool:
        """Whether a unit waiting for a worker waits for nothing: its attempt's job has ended
        (or is not kept) and the unit is still waiting, read again after the job: a job that
        started it left it active, complete or failed before it ended."""
        run = self.plan.run_id
        if await self.queue.unit_pending(run, unit.number, unit.attempt):
            return False
        again = await self.live.unit(run, unit.number)
        return again.state is State.WAITING and again.attempt == unit.attempt

    async def _check(self, unit: UnitStatus, *, queued_now: bool = False) -> Outcome | None:
        """Retry a unit that failed or died, or that waits for a job that ended (unless its
        job was `queued_now`); its failed outcome once it is out of attempts."""
        live, run = self.live, self.plan.run_id
        if unit.state is State.TESTING:
            await self._take_up_stalled(unit)
            return None
        if unit.state is State.FAILED:
            if unit.fatal:
                raise LLMFatal(unit.error)
            reason = unit.error
        elif unit.state in STARTED and not await live.unit_alive(run, unit.number, unit.attempt):
            reason = f"its worker ({unit.worker or 'unknown'}) stopped answering"
            await live.set_unit(
                run, UnitStatus(number=unit.number, state=State.FAILED, error=reason)
            )
        elif unit.state is State.WAITING and not queued_now and await self._stranded(unit):
            reason = "its job ended before any worker started it"
            await live.set_unit(
                run, UnitStatus(number=unit.number, state=State.FAILED, error=reason)
            )
        else:
            return None
        log.warning("unit %s of %s, attempt %s, failed: %s", unit.number, run, unit.attempt, reason)
        if unit.attempt >= self.max_attempts:
            paths = self.plan.unit_paths
            return Outcome.failed(
                self.plan.unit_ids[unit.number],
                f"{reason} (gave up after {unit.attempt} attempts)",
                paths[unit.number] if unit.number < len(paths) else (),
            )
        await live.retry_unit(run, unit.number, unit.attempt + 1)
        await self.queue.enqueue_unit(run, unit.number, unit.attempt + 1)
        return None
