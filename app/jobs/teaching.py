"""Learnings taught on a pull request, kept for the repository's later reviews.

A finding's thread teaches Tiebreak when the tester withdraws the finding after a person's
reply, when someone who may steer Tiebreak reacts 👎 to it, or when a writer resolves the pull
request with a reason in it. Who may teach is checked where each happens (a hearing hears only
the author or a writer on a thread Tiebreak started; a 👎 or `/tiebreak resolve` counts only
from a writer); here the rule is checked (:mod:`policies.learnings`) and kept, unless the
repository's config turns learning off.
"""

import logging
from datetime import datetime

from pydantic import ValidationError

from app.events import PullKey
from app.store.learnings import LearningStore, Recorded
from policies.learnings import (
    Learning,
    Learnings,
    LearningsConfig,
    LearningSource,
    directory_glob,
)

log = logging.getLogger(__name__)


def thread_url(pull_url: str, thread: int) -> str:
    """The address of the review thread starting with comment `thread`."""
    return f"{pull_url}#discussion_r{thread}"


async def teach(
    store: LearningStore,
    config: LearningsConfig,
    pull: PullKey,
    *,
    rule: str,
    path: str,
    login: str,
    source: LearningSource,
    thread: str,
    now: datetime,
) -> Recorded | None:
    """Keep what `login` taught about the finding on `path` in the thread at `thread`, for
    the files of its directory; None when learning is off or the rule is not one."""
    if not config.enabled or not rule.strip():
        return None
    try:
        learning = Learning(
            rule=rule,
            paths=(directory_glob(path),),
            source=source,
            taught_by=login,
            taught_at=now,
            thread_url=thread,
        )
    except ValidationError as exc:
        # The rule is model text: one that breaks the bounds teaches nothing, and the
        # finding's fate does not depend on it.
        log.info("a learning on %s was not kept: %s", pull.key, exc.errors()[0]["msg"])
        return None
    recorded = await store.record(pull.full_name, learning)
    if recorded.dropped is not None:
        log.info("%s dropped learning #%d, its oldest", pull.full_name, recorded.dropped)
    return recorded


async def applied(store: LearningStore, config: LearningsConfig, repository: str) -> Learnings:
    """What a review of the repository `owner/repo` applies: the config's learnings and those
    kept, unless the config turns learning off (then the store is not read)."""
    if not config.enabled:
        return Learnings()
    return Learnings.of(config, await store.all(repository))
