"""Whose 👎 on Tiebreak's findings counts: a writer's.

GitHub sends no webhook for a reaction: a review reads the 👎s on its findings' comments when
it reconciles what it found with the pull request (:mod:`app.review.posted` counts them), and
asks who made them for the comments that have any. Anyone may react on a public repository,
so a 👎 dismisses a finding, and teaches (:mod:`app.review.teaching`), only from a person (never a
bot) who may write to the repository; the author's, a reader's or a stranger's is not counted,
whoever reacted before the writer. The way to dispute a finding without write access is a
reply on its thread, which the tester weighs (:mod:`app.jobs.hearing`).
"""

import logging
from collections.abc import Sequence

from app.events import PullKey
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.github.models import Author
from app.publishing.rereview import PostedThread
from app.review.collaborators import Permissions

log = logging.getLogger(__name__)


async def refused(
    github: InstallationClient,
    pull: PullKey,
    threads: Sequence[PostedThread],
    permissions: Permissions,
) -> list[PostedThread]:
    """`threads`, each a writer reacted 👎 to marked with the first such writer. A thread
    whose 👎s cannot be read stays as it is: its finding stands, and its 👎s are read again at
    the next review."""
    marked: list[PostedThread] = []
    for thread in threads:
        writer = None
        if thread.thumbs_down:
            try:
                writer = await _first_writer(
                    await github.thumbs_down(pull, thread.comment_id), permissions
                )
            except GitHubError as exc:
                log.warning("could not read who marked thread %s 👎: %s", thread.comment_id, exc)
        marked.append(thread.model_copy(update={"refused_by": writer}) if writer else thread)
    return marked


async def _first_writer(people: Sequence[Author], permissions: Permissions) -> str | None:
    """The first of `people` who may write to the repository: a person, never a bot."""
    for person in people:
        if person.type == "Bot" or person.login.endswith("[bot]") or not person.login:
            continue
        if await permissions.writes(person.login):
            return person.login
    return None
