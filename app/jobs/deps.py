"""What every job is given: a typed :class:`WorkerDeps`, built once per worker process.

Jobs get it from arq's context dict with :func:`deps_of` rather than reaching into the dict
for clients. Tests inject their own (a scripted model, a client on a fake GitHub).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agents.claude import ClaudeLLM, RoleModels
from agents.diff import DEFAULT_UNIT_TOKENS
from agents.llm import LLMClient
from app.github.client import GitHubApp
from app.jobs.reading import ReadingLimits
from app.links import TranscriptLinks, links_for
from app.parsing import Parsing
from app.settings import Settings, SettingsError
from app.store.allowance import DailyAllowance, utc_now
from app.store.heads import Heads
from app.store.live import LiveRuns
from app.store.pulls import RunStore
from app.store.queue import ReviewQueue
from app.store.transcripts import TranscriptStore
from app.telemetry.debates import MeteredLLM
from app.telemetry.metrics import Metrics
from policies.config import Models

REVIEW_TIMEOUT = 30 * 60
"""Seconds one review may take before arq cancels it."""


CHECK_DEADLINE = REVIEW_TIMEOUT + 5 * 60
"""Seconds after which the janitor completes a review's check run that is still unfinished."""


HEARTBEAT = 30.0
"""Seconds a heartbeat lives without renewal: a worker silent this long is taken for dead."""


MAX_UNIT_ATTEMPTS = 3


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
    parsing: Parsing = field(default_factory=Parsing)
    """Where the changed files are parsed for context, off the event loop; closed with the
    workers."""
    reading: ReadingLimits = field(default_factory=ReadingLimits)
    """How much of its changed files a review reads for context."""

    def started_queue(self) -> ReviewQueue:
        """The queue, which the worker sets as it starts."""
        if self.queue is None:
            raise RuntimeError("the worker has not started")
        return self.queue

    def heads(self) -> Heads:
        """The pull requests' latest heads, on the worker's Redis."""
        return Heads(self.started_queue().redis)

    def live_runs(self) -> LiveRuns:
        """The coordination keys of live runs, on the worker's Redis."""
        return LiveRuns(self.started_queue().redis, self.heartbeat)

    def transcripts(self) -> TranscriptStore:
        """Where finished runs' transcripts are kept, on the worker's Redis."""
        retention = self.settings.tiebreak_transcript_retention
        return TranscriptStore(self.started_queue().redis, retention)

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
        cap = self.settings.tiebreak_daily_token_cap
        return DailyAllowance(self.started_queue().redis, installation_id, cap, clock=self.clock)

    @classmethod
    def from_settings(cls, settings: Settings) -> "WorkerDeps":
        settings.require(worker=True)
        app_id = settings.github_app_id
        if app_id is None:  # `require` made sure; this informs the type checker
            raise SettingsError("GITHUB_APP_ID is required")
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
            llm=settings.claude(),
        )


def deps_of(ctx: dict[str, Any]) -> WorkerDeps:
    deps: WorkerDeps = ctx["deps"]
    return deps
