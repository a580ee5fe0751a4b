"""What every job is given: a typed :class:`WorkerDeps`, built once per worker process.

A process is set up in two steps. :class:`WorkerSetup` is what can be made before an event
loop runs — the settings, the GitHub and model clients, the limits — and is what the command
line and the tests make. :class:`WorkerDeps` is that setup with the stores on the worker's
Redis pool, made as the workers start (:meth:`WorkerDeps.started`): every field required,
nothing set later, so no job can meet a store that is not there. Jobs get it from arq's
context dict with :func:`deps_of` rather than reaching into the dict for clients.
"""

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Self

from agents.diff import DEFAULT_UNIT_TOKENS
from agents.models.llm import LLMClient
from app.github.client import GitHubApp
from app.links import TranscriptLinks, links_for
from app.parsing import Parsing
from app.review.gathering import ReadingLimits
from app.settings import Settings, SettingsError
from app.snapshots.cache import SnapshotCache, snapshots_for
from app.store.allowance import DailyAllowance, utc_now
from app.store.connection import Pool
from app.store.heads import Heads
from app.store.hearings import Hearings
from app.store.learnings import LearningStore
from app.store.live import LiveRuns
from app.store.pulls import Pulls
from app.store.queue import ReviewQueue
from app.store.transcripts import TranscriptStore
from app.store.workflow_runs import WorkflowRuns
from app.telemetry.debates import MeteredLLM
from app.telemetry.metrics import Metrics

REVIEW_TIMEOUT = 30 * 60
"""Seconds one review may take before arq cancels it."""


CHECK_DEADLINE = REVIEW_TIMEOUT + 5 * 60
"""Seconds after which the janitor completes a review's check run that is still unfinished."""


HEARTBEAT = 30.0
"""Seconds a heartbeat lives without renewal: a worker silent this long is taken for dead."""


MAX_UNIT_ATTEMPTS = 3


@dataclass(frozen=True, kw_only=True)
class WorkerSetup:
    """What a worker process is made of before it runs: its clients and its limits."""

    settings: Settings
    github: GitHubApp
    llm: LLMClient
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
    parsing: Parsing = field(default_factory=Parsing)
    """Where the changed files are parsed for context, off the event loop; closed with the
    workers."""
    reading: ReadingLimits = field(default_factory=ReadingLimits)
    """How much of its changed files a review reads for context."""
    snapshots: SnapshotCache | None = None
    """Where the repositories' snapshots at a pull request's head are kept; None reads none,
    the agents reading the changed files alone."""
    closing: Sequence[Callable[[], Awaitable[None]]] = ()
    """What to close as the workers stop, besides the GitHub client and the parsing: the
    model client's connections."""

    @classmethod
    def from_settings(cls, settings: Settings) -> "WorkerSetup":
        settings.require(worker=True)
        app_id = settings.github_app_id
        if app_id is None:  # `require` made sure; this informs the type checker
            raise SettingsError("GITHUB_APP_ID is required")
        every = settings.tiebreak_janitor_every
        metrics = Metrics()
        llm = settings.claude()
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
            llm=llm,
            snapshots=snapshots_for(settings),
            closing=(llm.aclose,),
        )


@dataclass(frozen=True, kw_only=True)
class WorkerDeps(WorkerSetup):
    """Everything a job uses: the process's setup, and its stores on the worker's Redis."""

    redis: Pool
    queue: ReviewQueue
    pulls: Pulls

    @classmethod
    def started(cls, setup: WorkerSetup, redis: Pool) -> Self:
        """`setup`'s dependencies, with the stores on `redis`."""
        made = {f.name: getattr(setup, f.name) for f in fields(setup)}
        return cls(**made, redis=redis, queue=ReviewQueue(redis), pulls=Pulls(redis))

    @property
    def counted_llm(self) -> LLMClient:
        """The model client, each of its calls counted in the process's metrics."""
        return MeteredLLM(self.llm, self.metrics)

    def heads(self) -> Heads:
        """The pull requests' latest heads."""
        return Heads(self.redis)

    def hearings(self) -> Hearings:
        """The replies heard on finding threads, each once, and their cap."""
        return Hearings(self.redis)

    def learnings(self) -> LearningStore:
        """What each repository's people taught Tiebreak."""
        return LearningStore(self.redis)

    def live_runs(self) -> LiveRuns:
        """The coordination keys of live runs."""
        return LiveRuns(self.redis, self.heartbeat)

    def workflow_runs(self) -> WorkflowRuns:
        """Findings' tests dispatched to repositories' Actions, and who waits for each."""
        return WorkflowRuns(self.redis)

    def transcripts(self) -> TranscriptStore:
        """Where finished runs' transcripts are kept."""
        return TranscriptStore(self.redis, self.settings.tiebreak_transcript_retention)

    def allowance(self, installation_id: int) -> DailyAllowance:
        """The installation's daily token allowance."""
        cap = self.settings.tiebreak_daily_token_cap
        return DailyAllowance(self.redis, installation_id, cap, clock=self.clock)


def deps_of(ctx: dict[str, Any]) -> WorkerDeps:
    deps: WorkerDeps = ctx["deps"]
    return deps
