"""The arq worker: its dependencies, built once per process, and its settings.

Jobs get a typed :class:`WorkerDeps` rather than reaching into arq's context dict for
clients. Tests inject their own (a scripted model, a client on a fake GitHub).
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from arq import Worker, cron, func
from arq.connections import RedisSettings

from agents.claude import ClaudeLLM, RoleModels
from agents.llm import LLMClient
from app.allowance import DailyAllowance, utc_now
from app.github import GitHubApp
from app.queue import COMMAND_JOB, REVIEW_JOB, ReviewQueue
from app.runs import RunStore
from app.settings import Settings, SettingsError
from policies.config import Models

REVIEW_TIMEOUT = 30 * 60
"""Seconds one review may take before arq cancels it."""

COMMAND_TIMEOUT = 5 * 60
"""Seconds one comment's commands may take (an apply commits several files)."""

KEEP = 3600
"""Seconds a finished review's job id keeps blocking a second review of the same head."""

CHECK_DEADLINE = REVIEW_TIMEOUT + 5 * 60
"""Seconds after which the janitor completes a review's check run that is still unfinished."""


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
    unit_concurrency: int = 4
    clock: Callable[[], datetime] = utc_now
    """What time it is: the daily allowance's day is the UTC day."""
    check_deadline: int = CHECK_DEADLINE

    def llm_for(self, models: Models) -> LLMClient:
        """The model client with a repository's choice of models, where it made one."""
        if not isinstance(self.llm, ClaudeLLM):
            return self.llm  # a scripted model in tests: there is nothing to choose
        default = self.settings.tiebreak_model
        return self.llm.with_models(
            RoleModels(
                tester=models.tester or default,
                coder=models.coder or default,
                arbiter=models.arbiter or default,
            )
        )

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
        return cls(
            settings=settings,
            github=GitHubApp(app_id, settings.private_key(), str(settings.github_api_url)),
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


def build_worker(
    deps: WorkerDeps, redis_url: str, *, burst: bool = False, handle_signals: bool = True
) -> Worker:
    """A worker that runs review and command jobs with `deps` on the Redis at `redis_url`."""
    # Imported here: the jobs import this module for WorkerDeps.
    from app.command_job import run_commands
    from app.janitor import sweep_check_runs
    from app.review_job import review_pull_request

    return Worker(
        functions=[
            func(review_pull_request, name=REVIEW_JOB, timeout=REVIEW_TIMEOUT, keep_result=KEEP),
            func(run_commands, name=COMMAND_JOB, timeout=COMMAND_TIMEOUT, keep_result=KEEP),
        ],
        redis_settings=RedisSettings.from_dsn(redis_url),
        # Every minute, on one worker of the fleet.
        cron_jobs=[cron(sweep_check_runs, name="janitor", second=0, unique=True, timeout=120)],
        on_startup=_startup,
        on_shutdown=_shutdown,
        ctx={"deps": deps},
        allow_abort_jobs=True,
        burst=burst,
        handle_signals=handle_signals,
        poll_delay=0.2,
        max_jobs=8,
    )
