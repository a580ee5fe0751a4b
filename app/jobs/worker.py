"""The arq worker: its dependencies, built once per process, and its settings.

Jobs get a typed :class:`WorkerDeps` rather than reaching into arq's context dict for
clients. Tests inject their own (a scripted model, a client on a fake GitHub).
"""

import asyncio
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from arq import Worker, cron, func
from arq.connections import RedisSettings
from redis.asyncio import Redis

from agents.claude import ClaudeLLM, RoleModels
from agents.diff import DEFAULT_UNIT_TOKENS
from agents.llm import LLMClient
from app.github.client import GitHubApp
from app.jobs.counting import counted
from app.links import TranscriptLinks, links_for
from app.settings import Settings, SettingsError
from app.store.allowance import DailyAllowance, utc_now
from app.store.live import LiveRuns
from app.store.pulls import RunStore
from app.store.queue import COMMAND_JOB, REVIEW_JOB, UNIT_JOB, UNIT_QUEUE, ReviewQueue
from app.store.transcripts import TranscriptStore
from app.telemetry.debates import MeteredLLM
from app.telemetry.metrics import Metrics
from policies.config import Models

REVIEW_TIMEOUT = 30 * 60
"""Seconds one review may take before arq cancels it."""

COMMAND_TIMEOUT = 5 * 60
"""Seconds one comment's commands may take (an apply commits several files)."""

KEEP = 3600
"""Seconds a finished review's job id keeps blocking a second review of the same head."""

CHECK_DEADLINE = REVIEW_TIMEOUT + 5 * 60
"""Seconds after which the janitor completes a review's check run that is still unfinished."""

UNIT_TIMEOUT = REVIEW_TIMEOUT
"""Seconds one attempt at one unit may take before arq cancels it."""

HEARTBEAT = 30.0
"""Seconds a heartbeat lives without renewal: a worker silent this long is taken for dead."""

MAX_UNIT_ATTEMPTS = 3

JANITOR_JOB = "janitor"


@dataclass
class WorkerDeps:
    """Everything a review job uses."""

    settings: Settings
    github: GitHubApp
    llm: LLMClient
    queue: ReviewQueue | None = None
    """Set when the worker starts, on the worker's own Redis pool."""
    runs: RunStore | None = None
    """Likewise."""
    unit_concurrency: int = 8
    """Units one process debates at a time."""
    unit_tokens: int = DEFAULT_UNIT_TOKENS
    """The size of a review unit, in diff tokens."""
    clock: Callable[[], datetime] = utc_now
    """What time it is: the daily allowance's day is the UTC day."""
    check_deadline: int = CHECK_DEADLINE
    heartbeat: float = HEARTBEAT
    """Seconds a run's or a unit's heartbeat lives without renewal."""
    max_unit_attempts: int = MAX_UNIT_ATTEMPTS
    sweep_seconds: frozenset[int] = frozenset({0})
    """The seconds of each minute at which the janitor sweeps."""
    links: TranscriptLinks | None = None
    """Makes the links to transcripts from check runs; None when the server has none."""
    metrics: Metrics = field(default_factory=Metrics)
    """This process's counts, flushed to Redis while the workers run. `github` counts its
    failed requests in its own: give both the same."""

    def live_runs(self) -> LiveRuns:
        """The coordination keys of live runs, on the worker's Redis."""
        if self.queue is None:
            raise RuntimeError("the worker has not started")
        return LiveRuns(self.queue.redis, self.heartbeat)

    def transcripts(self) -> TranscriptStore:
        """Where finished runs' transcripts are kept, on the worker's Redis."""
        if self.queue is None:
            raise RuntimeError("the worker has not started")
        return TranscriptStore(self.queue.redis, self.settings.tiebreak_transcript_retention)

    def llm_for(self, models: Models) -> LLMClient:
        """The model client with a repository's choice of models, where it made one; its
        calls are counted."""
        if not isinstance(self.llm, ClaudeLLM):
            # A scripted model in tests: there is nothing to choose.
            return MeteredLLM(self.llm, self.metrics)
        default = self.settings.tiebreak_model
        chosen = self.llm.with_models(
            RoleModels(
                tester=models.tester or default,
                coder=models.coder or default,
                arbiter=models.arbiter or default,
            )
        )
        return MeteredLLM(chosen, self.metrics)

    def allowance(self, installation_id: int) -> DailyAllowance:
        """The installation's daily token allowance."""
        if self.queue is None:
            raise RuntimeError("the worker has not started")
        cap = self.settings.tiebreak_daily_token_cap
        return DailyAllowance(self.queue.redis, installation_id, cap, clock=self.clock)

    @classmethod
    def from_settings(cls, settings: Settings) -> "WorkerDeps":
        settings.require(worker=True)
        key, app_id = settings.anthropic_api_key, settings.github_app_id
        if key is None or app_id is None:  # `require` made sure; this informs the type checker
            raise SettingsError("ANTHROPIC_API_KEY and GITHUB_APP_ID are required")
        every = settings.tiebreak_janitor_every
        metrics = Metrics()
        return cls(
            settings=settings,
            unit_concurrency=settings.tiebreak_unit_concurrency,
            heartbeat=settings.tiebreak_heartbeat,
            sweep_seconds=frozenset(range(0, 60, every)),
            links=links_for(settings),
            metrics=metrics,
            github=GitHubApp(
                app_id, settings.private_key(), str(settings.github_api_url), metrics=metrics
            ),
            llm=ClaudeLLM.connect(
                api_key=key.get_secret_value(),
                base_url=settings.anthropic_base_url,
                models=RoleModels(
                    tester=settings.tiebreak_model,
                    coder=settings.tiebreak_model,
                    arbiter=settings.tiebreak_model,
                ),
            ),
        )


def deps_of(ctx: dict[str, Any]) -> WorkerDeps:
    deps: WorkerDeps = ctx["deps"]
    return deps


async def _startup(ctx: dict[str, Any]) -> None:
    deps = deps_of(ctx)
    deps.queue, deps.runs = ReviewQueue(ctx["redis"]), RunStore(ctx["redis"])


async def _shutdown(ctx: dict[str, Any]) -> None:
    llm = deps_of(ctx).llm
    if isinstance(llm, ClaudeLLM):
        await llm.aclose()


class Workers:
    """The two arq workers of one process: reviews, commands and the janitor on the default
    queue; units on their own queue, so reviews waiting for their units can never hold every
    slot a unit needs. They share one set of dependencies. Make them inside the event loop that
    runs them: arq binds a worker to the loop it is made in."""

    def __init__(self, deps: WorkerDeps, redis_url: str, *, burst: bool = False) -> None:
        # Imported here: the jobs import this module for WorkerDeps.
        from app.jobs.commands import run_commands
        from app.jobs.janitor import sweep
        from app.jobs.review import review_pull_request
        from app.jobs.unit import debate_unit

        self.deps = deps
        self.redis_url = redis_url
        settings = RedisSettings.from_dsn(redis_url)
        metrics = deps.metrics
        common: dict[str, Any] = {
            "redis_settings": settings,
            "on_startup": _startup,
            "ctx": {"deps": deps},
            "allow_abort_jobs": True,
            "handle_signals": False,
        }
        self.reviews = Worker(
            functions=[
                func(
                    counted(review_pull_request, REVIEW_JOB, metrics),
                    name=REVIEW_JOB,
                    timeout=REVIEW_TIMEOUT,
                    keep_result=KEEP,
                ),
                func(
                    counted(run_commands, COMMAND_JOB, metrics),
                    name=COMMAND_JOB,
                    timeout=COMMAND_TIMEOUT,
                    keep_result=KEEP,
                ),
            ],
            # On one worker of the fleet at a time.
            cron_jobs=[
                cron(
                    counted(sweep, JANITOR_JOB, metrics),
                    name=JANITOR_JOB,
                    second=set(deps.sweep_seconds),
                    unique=True,
                    timeout=120,
                )
            ],
            on_shutdown=_shutdown,
            burst=burst,
            poll_delay=0.2,
            max_jobs=8,
            **common,
        )
        self.units = Worker(
            functions=[
                func(
                    counted(debate_unit, UNIT_JOB, metrics),
                    name=UNIT_JOB,
                    timeout=UNIT_TIMEOUT,
                    keep_result=KEEP,
                )
            ],
            queue_name=UNIT_QUEUE,
            # Picked up fast: a unit's wait is on the review's critical path.
            poll_delay=0.05,
            max_jobs=deps.unit_concurrency,
            **common,
        )

    async def run(self) -> None:
        """Run both until the review worker ends (in burst mode, when its queue is empty) or
        until :meth:`stop`, flushing the process's metrics meanwhile and once they end."""
        redis = Redis.from_url(self.redis_url)
        try:
            async with self.deps.metrics.flushing(redis):
                await self._run()
        finally:
            await redis.aclose()

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


def run_until_signalled(deps: WorkerDeps, redis_url: str) -> None:
    """Run one process's workers until SIGINT or SIGTERM, as `tiebreak worker` does."""

    async def main() -> None:
        workers = Workers(deps, redis_url)  # arq binds a worker to the loop it is made in
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, lambda: asyncio.ensure_future(workers.stop()))
        await workers.run()

    asyncio.run(main())


def _cancel_jobs(worker: Worker) -> None:
    for task in worker.tasks.values():
        task.cancel()


async def _drain(worker: Worker, running: "asyncio.Task[None]") -> None:
    """End a worker's poll loop after its current iteration, cancel its jobs, wait for both
    (whatever they end with: the cancellations are ours), then close the worker."""
    _cancel_jobs(worker)
    worker.burst, worker.max_burst_jobs = True, 0
    await asyncio.gather(running, *worker.tasks.values(), return_exceptions=True)
    worker.tasks.clear()  # all ended; `close` would raise a cancellation of ours again
    await worker.close()
