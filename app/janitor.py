"""The janitor: no pull request is left with a check run that spins for ever.

A review opens its check run in Redis with a deadline and closes it when it completes it. A
worker that dies mid-review (killed, out of memory, its machine gone) completes nothing: every
minute one worker of the fleet (arq's unique cron job) claims the check runs past their
deadline and completes those GitHub still shows unfinished as `timed_out`, saying why.
"""

import logging
import time
from typing import Any

from githubkit.exception import GitHubException

from app import publish
from app.landing import complete_check_run
from app.runs import OpenCheck
from app.worker import WorkerDeps, deps_of

RETRY_LATER = 300
"""Seconds before the janitor tries again at a check run GitHub would not let it complete."""

log = logging.getLogger(__name__)


async def sweep_check_runs(ctx: dict[str, Any]) -> int:
    """arq's cron entry point: complete the overdue check runs."""
    return await complete_overdue(deps_of(ctx), now=time.time())


async def complete_overdue(deps: WorkerDeps, *, now: float) -> int:
    """Complete every check run past its deadline that is still unfinished; return how many."""
    if deps.runs is None:
        raise RuntimeError("the worker has not started")
    completed = 0
    for check in await deps.runs.claim_overdue_checks(now):
        try:
            completed += await _complete(deps, check)
        except GitHubException as exc:
            log.warning("could not complete check run %s: %s", check.check_run_id, exc)
            await deps.runs.open_check(check, now + RETRY_LATER)
    return completed


async def _complete(deps: WorkerDeps, check: OpenCheck) -> bool:
    github = deps.github.installation(check.ref.installation_id)
    if await github.check_run_status(check.ref, check.check_run_id) == "completed":
        return False  # completed by its review after all; only the bookkeeping was lost
    minutes = deps.check_deadline // 60
    result = publish.timed_out(minutes, run_id=check.run_id, head_sha=check.ref.head_sha)
    await complete_check_run(github, check.ref, check.check_run_id, result)
    log.warning("completed check run %s of %s as timed out", check.check_run_id, check.ref.key)
    return True
