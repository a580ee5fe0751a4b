"""Tiebreak's own posts on a pull request, read back, and its summary kept up to date.

What Tiebreak posted is read from the pull request itself, by the hidden markers its comments
carry: each inline comment ends with its finding's fingerprint, the summary comment starts
with the summary marker, a reply on a thread whose finding is gone ends with its own. Only
comments the App's own bot user wrote are read (the gateway's `own_…` calls): anyone can
write a marker. Whether a person resolved a thread comes from GitHub's GraphQL API, whether
anyone reacted 👎 from the comment's reactions (whose 👎 counts: :mod:`app.review.thumbs_down`).
"""

import logging
from collections.abc import Sequence

from app.events import PullKey
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.github.models import IssueComment
from app.publishing.fingerprints import Fingerprint
from app.publishing.markers import ANSWERED_MARKER, SUMMARY_MARKER
from app.publishing.publication import ThreadReply
from app.publishing.rereview import PostedThread
from app.review.together import together

log = logging.getLogger(__name__)


async def posted_threads(github: InstallationClient, ref: PullKey) -> list[PostedThread]:
    """The review threads Tiebreak started on the pull request, and what people did to them.

    If GitHub will not say which threads are resolved, they are all taken as open (and so
    stay listed): a finding is never posted twice either way, its thread is there.
    """
    comments, resolved = await together(github.own_review_comments(ref), _resolved(github, ref))
    roots: dict[int, tuple[Fingerprint, bool]] = {}
    answered: set[int] = set()
    for comment in comments:
        if comment.in_reply_to_id is not None:
            if comment.body.rstrip().endswith(ANSWERED_MARKER):
                answered.add(comment.in_reply_to_id)
            continue
        fingerprint = Fingerprint.from_comment(comment.path, comment.body)
        if fingerprint is not None:
            roots[comment.id] = (fingerprint, comment.reactions.thumbs_down > 0)
    return [
        PostedThread(
            comment_id=comment_id,
            fingerprint=fingerprint,
            resolved=comment_id in resolved,
            thumbs_down=thumbs_down,
            answered=comment_id in answered,
        )
        for comment_id, (fingerprint, thumbs_down) in roots.items()
    ]


async def _resolved(github: InstallationClient, ref: PullKey) -> set[int]:
    """The first comments of the pull request's resolved threads; none if GitHub will not say."""
    try:
        return await github.resolved_threads(ref)
    except GitHubError as exc:
        log.warning("could not read which threads of %s are resolved: %s", ref.key, exc)
        return set()


async def write_summary(
    github: InstallationClient,
    ref: PullKey,
    body: str,
    comments: Sequence[IssueComment] | None = None,
) -> None:
    """Edit the pull request's summary comment to `body`, or write it if there is none;
    `comments` are the App's conversation comments, if they were just read."""
    if comments is None:
        comments = await github.own_issue_comments(ref)
    for comment in comments:
        if comment.body.split("\n", 1)[0] == SUMMARY_MARKER:
            if comment.body != body:
                await github.edit_comment(ref, comment.id, body)
            return
    await github.comment(ref, body)


async def answer(github: InstallationClient, ref: PullKey, replies: Sequence[ThreadReply]) -> None:
    """Reply on threads whose findings are gone; a thread deleted meanwhile is skipped."""
    for reply in replies:
        try:
            await github.reply_in_thread(ref, reply.thread, reply.body)
        except GitHubError as exc:
            if exc.status not in (404, 422):
                raise
            log.warning("could not reply on thread %s of %s: %s", reply.thread, ref.key, exc)
