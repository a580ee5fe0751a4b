"""The arq workers of one process, and the jobs they run.

Each job of :class:`app.store.queue.JobName` is bound here to its function, with its timeout and
how long its result blocks a second run; the web server enqueues jobs by those same names and
never imports this package. Every run of a job is counted by how it ended.
"""

import asyncio
import functools
import gc
import signal
from collections.abc import Awaitable, Callable
from typing import Any

from arq import cron, func
from arq.connections import RedisSettings
from arq.typing import WorkerCoroutine
from arq.worker import Function

from app.jobs.commands import run_commands
from app.jobs.deps import REVIEW_TIMEOUT, WorkerDeps, WorkerSetup, deps_of
from app.jobs.hearing import run_hearing
from app.jobs.janitor import sweep
from app.jobs.job_results import Ending, JobResult
from app.jobs.review import review_pull_request
from app.jobs.unit import debate_unit
from app.jobs.warmup import warm_up
from app.jobs.workflow_results import take_workflow_run
from app.store.connection import connect
from app.store.counters import FleetCounters
from app.store.keys import HEARING_TTL, UNIT_QUEUE
from app.store.queue import JobName
from app.store.wakeups import PromptWorker
from app.telemetry.metrics import JOBS, Metrics

COMMAND_TIMEOUT = 5 * 60
"""Seconds one comment's commands may take (an apply commits several files)."""

HEARING_TIMEOUT = HEARING_TTL
"""Seconds one reply's hearing may take: no longer than it may hold its thread."""

UNIT_TIMEOUT = REVIEW_TIMEOUT
"""Seconds one attempt at one unit may take before arq cancels it."""

JANITOR_TIMEOUT = 120

IDLE_POLL = 0.5
"""Seconds between looks at a queue nobody announced a job on (a job is announced as it is
queued, and picked up at once: see :mod:`app.store.wakeups`)."""

GC_YOUNGEST = 20_000
"""Allocations between collections of the garbage collector's youngest generation (Python's
default is 700). A debate allocates in bursts of short-lived objects (requests, answers, their
JSON): at the default, a 20-unit review ran ~50 collections, ~14 ms of pauses in all, each one
stalling every debate of the process; at this, one or two."""

KEEP = 3600
"""Seconds a finished review's job id keeps blocking a second review of the same head."""


async def _startup(ctx: dict[str, Any]) -> None:
    deps = deps_of(ctx)
    deps.github.keep_alive()
    # What was made so far (the libraries' modules and models, the dependencies) lives as
    # long as the process: kept out of the garbage collector's full passes, each of which
    # would otherwise walk it all (about 0.1 s), stalling every debate in the process.
    gc.freeze()
    gc.set_threshold(GC_YOUNGEST, *gc.get_threshold()[1:])


async def _shutdown(ctx: dict[str, Any]) -> None:
    deps = deps_of(ctx)
    await deps.github.aclose()
    deps.parsing.close()
    for close in deps.closing:
        await close()


class Workers:
    """The two arq workers of one process: reviews, commands, hearings and the janitor on
    the default queue; units on their own queue, so reviews waiting for their units can never
    hold every slot a unit needs. They share one set of dependencies. Make them inside the
    event loop that runs them: arq binds a worker to the loop it is made in."""

    def __init__(self, setup: WorkerSetup, redis_url: str, *, burst: bool = False) -> None:
        # The jobs' stores share one pool of the process; arq's two workers keep their own
        # (their reads block on purpose, so none has a timeout).
        self.deps = deps = WorkerDeps.started(setup, connect(redis_url, timeout=None))
        self.redis_url = redis_url
        self.warmed = asyncio.Event()
        """Set once :meth:`run` has warmed up (:mod:`app.jobs.warmup`), before any job."""
        settings = RedisSettings.from_dsn(redis_url)
        metrics = deps.metrics
        common: dict[str, Any] = {
            "redis_settings": settings,
            "on_startup": _startup,
            "ctx": {"deps": deps},
            "allow_abort_jobs": True,
            "handle_signals": False,
            "idle_poll": IDLE_POLL,
        }
        self.reviews = PromptWorker(
            functions=[
                _function(JobName.REVIEW, review_pull_request, REVIEW_TIMEOUT, metrics),
                _function(JobName.COMMANDS, run_commands, COMMAND_TIMEOUT, metrics),
                _function(JobName.HEARING, run_hearing, HEARING_TIMEOUT, metrics),
                _function(JobName.WORKFLOW_RUN, take_workflow_run, COMMAND_TIMEOUT, metrics),
            ],
            # On one worker of the fleet at a time.
            cron_jobs=[
                cron(
                    counted(sweep, JobName.JANITOR, metrics),
                    name=JobName.JANITOR,
                    second=set(deps.sweep_seconds),
                    unique=True,
                    timeout=JANITOR_TIMEOUT,
                )
            ],
            on_shutdown=_shutdown,
            burst=burst,
            max_jobs=8,
            **common,
        )
        self.units = PromptWorker(
            functions=[_function(JobName.UNIT, debate_unit, UNIT_TIMEOUT, metrics)],
            queue_name=UNIT_QUEUE,
            max_jobs=deps.unit_concurrency,
            **common,
        )

    async def run(self) -> None:
        """Run both until the review worker ends (in burst mode, when its queue is empty) or
        until :meth:`stop`, flushing the process's metrics meanwhile and once they end."""
        try:
            async with FleetCounters(self.deps.redis).flushing(self.deps.metrics):
                # Before any job: the first review then starts as quickly as any other.
                try:
                    await warm_up(self.deps)
                finally:
                    self.warmed.set()
                await self._run()
        finally:
            await self.deps.redis.aclose()

    async def _run(self) -> None:
        units = asyncio.create_task(self.units.async_run())
        reviews = asyncio.create_task(self.reviews.async_run())
        try:
            await asyncio.wait({reviews})
        finally:
            await _drain(self.units, units)
            await _drain(self.reviews, reviews)
        # A job cancelled by the stop may end its worker's loop cancelled too; that is the
        # stop, not a failure. Anything else the loop raised is.
        if not reviews.cancelled() and (error := reviews.exception()) is not None:
            raise error

    async def stop(self) -> None:
        """Stop as a shutdown does: running jobs are cancelled (arq runs them again later).
        The poll loops are left to end on their own rather than cancelled mid-iteration, which
        could leave a Redis transaction half-used."""
        for worker in (self.reviews, self.units):
            _cancel_jobs(worker)
            worker.burst, worker.max_burst_jobs = True, 0
            worker.wake()


def counted(
    job: Callable[..., Awaitable[JobResult]], name: str, metrics: Metrics
) -> WorkerCoroutine:
    """`job`, counting how each run of it ends (:class:`Ending`): as its result says, failed
    if it raised, cancelled if it was; arq keeps the result as its text."""

    @functools.wraps(job)
    async def run(ctx: dict[Any, Any], *args: Any, **kwargs: Any) -> str:
        try:
            result = await job(ctx, *args, **kwargs)
        except asyncio.CancelledError:
            metrics.inc(JOBS, function=name, outcome=Ending.CANCELLED)
            raise
        except Exception:
            metrics.inc(JOBS, function=name, outcome=Ending.FAILED)
            raise
        metrics.inc(JOBS, function=name, outcome=result.ended)
        return str(result)

    return run


def _function(
    job: JobName, run: Callable[..., Awaitable[JobResult]], timeout: int, metrics: Metrics
) -> Function:
    """`run` as arq runs `job`: under its name, counted, within its timeout."""
    return func(counted(run, job, metrics), name=job, timeout=timeout, keep_result=KEEP)


def run_until_signalled(setup: WorkerSetup, redis_url: str) -> None:
    """Run one process's workers until SIGINT or SIGTERM, as `tiebreak worker` does."""

    async def main() -> None:
        workers = Workers(setup, redis_url)  # arq binds a worker to the loop it is made in
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, lambda: asyncio.ensure_future(workers.stop()))
        await workers.run()

    asyncio.run(main())


def _cancel_jobs(worker: PromptWorker) -> None:
    for task in worker.tasks.values():
        task.cancel()


async def _drain(worker: PromptWorker, running: "asyncio.Task[None]") -> None:
    """End a worker's poll loop after its current iteration, cancel its jobs, wait for both
    (whatever they end with: the cancellations are ours), then close the worker."""
    _cancel_jobs(worker)
    worker.burst, worker.max_burst_jobs = True, 0
    worker.wake()
    await asyncio.gather(running, *worker.tasks.values(), return_exceptions=True)
    worker.tasks.clear()  # all ended; `close` would raise a cancellation of ours again
    await worker.close()
