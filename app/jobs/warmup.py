"""A worker's warm-up: the work a first review would otherwise do, done before any job runs.

A process's first review used to spend most of a second before its first model call on
things done once per process: starting the parsing processes (a forkserver that imports the
parsers, and its children), loading a grammar, GitHub's HTTP connection, its JWT and the
modules githubkit imports on first use, the App's own login. The worker does them as it
starts, so the first review after a deploy starts as quickly as the tenth. Nothing here is
needed for correctness: a step that fails is logged and left for the first review to do.
"""

import logging
import time

from app.github.errors import GitHubError
from app.jobs.deps import WorkerDeps

log = logging.getLogger(__name__)

SAMPLE = {"warm_up.py": "def warm_up() -> int:\n    return 1\n"}
"""A file for the parsing processes to parse once: it starts them and loads a grammar."""


async def warm_up(deps: WorkerDeps) -> None:
    """Start the parsing processes and GitHub's connection, and learn the App's login."""
    started = time.monotonic()
    await deps.parsing.outlines(SAMPLE)
    deps.github.keep_alive()  # the connection opened here is the first review's
    try:
        await deps.github.warm_up()
    except GitHubError as exc:
        log.warning("GitHub did not answer the warm-up; the first review will ask: %s", exc)
    log.info("worker warmed up in %.2f s", time.monotonic() - started)
