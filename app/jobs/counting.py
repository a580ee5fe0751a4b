"""How the worker's jobs are counted: each run of a job, by how it ended."""

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from arq.typing import WorkerCoroutine

from app.telemetry.metrics import JOBS, Metrics

FAILED_PREFIX = "failed:"
"""How a job that caught its own failure says so in its result (the review and unit jobs
catch everything, so that the pull request gets an answer)."""


def counted(job: Callable[..., Awaitable[Any]], name: str, metrics: Metrics) -> WorkerCoroutine:
    """`job`, counting how each run of it ends: cancelled (aborted, timed out, or stopped by
    a shutdown, after which arq runs it again), failed (raised, or returned a result starting
    with `failed:`), or completed."""

    @functools.wraps(job)
    async def run(ctx: dict[Any, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            result = await job(ctx, *args, **kwargs)
        except asyncio.CancelledError:
            metrics.inc(JOBS, function=name, outcome="cancelled")
            raise
        except Exception:
            metrics.inc(JOBS, function=name, outcome="failed")
            raise
        failed = isinstance(result, str) and result.startswith(FAILED_PREFIX)
        metrics.inc(JOBS, function=name, outcome="failed" if failed else "completed")
        return result

    return run
