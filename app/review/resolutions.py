"""Whose resolving of a finding's thread counts: a writer's, or Tiebreak's own.

GitHub lets the author of a pull request resolve its review threads whatever their access, and
a resolved thread is folded away on the pull request's page. So a resolved thread dismisses its
finding only when Tiebreak resolved it (having withdrawn the finding after a reply) or a
person who may write to the repository did (resolving teaches nothing either way: a writer
teaches with `/tiebreak resolve <reason>`, :mod:`app.review.teaching`). GitHub sends no webhook
Tiebreak reads for it: a review reads who resolved its threads when it reconciles what it
found with the pull request, and asks what each person may do, once per job
(:mod:`app.review.collaborators`).

A thread anyone else resolved (the author without write access, another App, a deleted account)
leaves its finding standing, unless a writer's `/tiebreak resolve` ended it there
(:func:`app.review.posted.posted_threads` reads Tiebreak's answer to it), and the review that
reads it reopens the thread while the finding stands, saying why once: on a public repository a
maintainer should find a finding where it was raised, not folded away as if settled. A thread
whose resolver's permission cannot be read is left as it is (its finding stands, and the next
review asks again). A reply on a thread its author resolved is heard as on an open one, and a
finding it withdraws has its thread resolved again, as Tiebreak (:mod:`app.jobs.hearing`).
"""

import logging
from collections.abc import Sequence

from app.events import PullKey
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.publishing import text
from app.publishing.rereview import PostedThread, ThreadState
from app.review.collaborators import Permissions

log = logging.getLogger(__name__)


async def heeded(threads: Sequence[PostedThread], permissions: Permissions) -> list[PostedThread]:
    """`threads`, each a person resolved marked as a writer's or disregarded, as the person
    may write to the repository or not."""
    marked: list[PostedThread] = []
    for thread in threads:
        if thread.state is ThreadState.BY_PERSON:
            try:
                writes = await permissions.writes(thread.resolver)
            except GitHubError as exc:
                log.warning("could not ask whether %s may write: %s", thread.resolver, exc)
            else:
                state = ThreadState.BY_WRITER if writes else ThreadState.DISREGARDED
                thread = thread.model_copy(update={"state": state})
        marked.append(thread)
    return marked


async def reopen(
    github: InstallationClient, pull: PullKey, threads: Sequence[PostedThread]
) -> None:
    """Reopen `threads`, whose findings stand though someone who may not write resolved them,
    and say why in each, once. A thread deleted meanwhile is skipped, and one GitHub will not
    reopen is logged: the finding stands either way (the summary, the check run and the label
    say so)."""
    for thread in threads:
        try:
            if await github.unresolve_thread(pull, thread.comment_id) and not thread.reopened:
                await github.reply_in_thread(pull, thread.comment_id, text.reopened())
        except GitHubError as exc:
            log.warning("could not reopen thread %s of %s: %s", thread.comment_id, pull.key, exc)
