"""Tiebreak's own posts on a pull request, read back, and its summary kept up to date.

What Tiebreak posted is read from the pull request itself, by the hidden markers its comments
carry: each inline comment ends with its finding's fingerprint, the summary comment starts
with the summary marker, a reply on a thread whose finding is gone, one withdrawing its finding,
one on reopening it, one saying its test passes and the note on its test's latest run each end
with their own. Only
comments the App's own bot user wrote are read (the gateway's `own_…` calls): anyone can
write a marker. Whether a thread is resolved, and by whom, comes from GitHub's GraphQL API
(whose resolving counts: :mod:`app.review.resolutions`), whether anyone reacted 👎 from the
comment's reactions (whose 👎 counts: :mod:`app.review.thumbs_down`).

GitHub names the user who resolved a thread, never an App's bot user: a thread it names no
one for is Tiebreak's own resolving where Tiebreak withdrew the finding there (its reply
carries the marker), and someone else's (another App, a deleted account) otherwise.
"""

import logging
from collections import defaultdict
from collections.abc import Sequence

from app.events import PullKey
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.github.models import IssueComment, ThreadResolution
from app.publishing.fingerprints import Fingerprint
from app.publishing.markers import (
    ANSWERED_MARKER,
    FIXED_MARKER,
    FOLLOWED_MARKER,
    REOPENED_MARKER,
    RESOLVED_MARKER,
    SUMMARY_MARKER,
    WITHDRAWN_MARKER,
)
from app.publishing.publication import ThreadNote, ThreadReply
from app.publishing.rereview import PostedThread, ThreadState
from app.review.together import together

log = logging.getLogger(__name__)

_REPLY_MARKERS = (
    ANSWERED_MARKER,
    WITHDRAWN_MARKER,
    REOPENED_MARKER,
    FIXED_MARKER,
    RESOLVED_MARKER,
)


async def posted_threads(github: InstallationClient, ref: PullKey) -> list[PostedThread]:
    """The review threads Tiebreak started on the pull request, and what people did to them.

    If GitHub will not say which threads are resolved, they are all taken as open (and so
    stay listed): a finding is never posted twice either way, its thread is there.
    """
    comments, resolved = await together(github.own_review_comments(ref), _resolved(github, ref))
    roots: dict[int, tuple[Fingerprint, bool]] = {}
    said: defaultdict[int, set[str]] = defaultdict(set)
    """The markers Tiebreak's replies in each thread end with."""
    notes: dict[int, int] = {}
    """Tiebreak's note on a followed test's latest run, by its thread's first comment."""
    for comment in comments:
        if comment.in_reply_to_id is not None:
            body = comment.body.rstrip()
            said[comment.in_reply_to_id] |= {m for m in _REPLY_MARKERS if body.endswith(m)}
            if body.endswith(FOLLOWED_MARKER):
                notes.setdefault(comment.in_reply_to_id, comment.id)
            continue
        fingerprint = Fingerprint.from_comment(comment.path, comment.body)
        if fingerprint is not None:
            roots[comment.id] = (fingerprint, comment.reactions.thumbs_down > 0)
    return [
        PostedThread(
            comment_id=comment_id,
            fingerprint=fingerprint,
            state=_state(resolved.get(comment_id), said[comment_id]),
            resolver=resolved.get(comment_id, ThreadResolution()).resolver,
            thumbs_down=thumbs_down,
            answered=ANSWERED_MARKER in said[comment_id],
            reopened=REOPENED_MARKER in said[comment_id],
            note=notes.get(comment_id),
            fixed=FIXED_MARKER in said[comment_id],
        )
        for comment_id, (fingerprint, thumbs_down) in roots.items()
    ]


_RESOLVING = {WITHDRAWN_MARKER, FIXED_MARKER, RESOLVED_MARKER}
"""Tiebreak's replies after which it resolves the thread."""


def _state(resolution: ThreadResolution | None, said: set[str]) -> ThreadState:
    """What a thread's resolution is worth before anyone's permission is asked, `said` being
    the markers of Tiebreak's replies in it. Resolved after Tiebreak answered a writer's
    `/tiebreak resolve` there, it is ended, whoever GitHub names as its resolver: a person
    who resolved it before the command (GitHub may keep naming them), or one who reopened it
    and resolved it again. Resolved after Tiebreak withdrew its finding there or said its
    test passes, it is ended when GitHub names no resolver (Tiebreak's App)."""
    if resolution is None:
        return ThreadState.OPEN
    if resolution.by_app or RESOLVED_MARKER in said:
        return ThreadState.BY_TIEBREAK
    if resolution.resolver:
        return ThreadState.BY_PERSON
    return ThreadState.BY_TIEBREAK if said & _RESOLVING else ThreadState.DISREGARDED


async def _resolved(github: InstallationClient, ref: PullKey) -> dict[int, ThreadResolution]:
    """The pull request's resolved threads by their first comments, with who resolved each;
    none if GitHub will not say."""
    try:
        return await github.resolved_threads(ref)
    except GitHubError as exc:
        log.warning("could not read which threads of %s are resolved: %s", ref.key, exc)
        return {}


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


async def note(github: InstallationClient, ref: PullKey, notes: Sequence[ThreadNote]) -> None:
    """Write Tiebreak's one note in each thread, replying the first time and editing it
    after; a thread or note deleted meanwhile is skipped."""
    for each in notes:
        try:
            if each.note is None:
                await github.reply_in_thread(ref, each.thread, each.body)
            else:
                await github.edit_review_comment(ref, each.note, each.body)
        except GitHubError as exc:
            if exc.status not in (404, 422):
                raise
            log.warning("could not write a note on thread %s of %s: %s", each.thread, ref.key, exc)


async def resolve(github: InstallationClient, ref: PullKey, threads: Sequence[int]) -> None:
    """Resolve the threads of findings whose tests pass now (one GitHub will not resolve is
    left as it is: the reply in it says the finding is fixed)."""
    for thread in threads:
        try:
            resolved = await github.resolve_thread(ref, thread)
        except GitHubError as exc:
            log.warning("could not resolve thread %s of %s: %s", thread, ref.key, exc)
            continue
        if not resolved:
            log.warning("thread %s of %s was not resolved", thread, ref.key)


async def answer(github: InstallationClient, ref: PullKey, replies: Sequence[ThreadReply]) -> None:
    """Reply on threads whose findings are gone; a thread deleted meanwhile is skipped."""
    for each in replies:
        await reply(github, ref, each.thread, each.body)


async def reply(github: InstallationClient, ref: PullKey, thread: int, body: str) -> bool:
    """Reply `body` in the thread starting with comment `thread`; False, logged, where the
    thread was deleted meanwhile (GitHub's 404, or 422 for a comment no longer there)."""
    try:
        await github.reply_in_thread(ref, thread, body)
    except GitHubError as exc:
        if exc.status not in (404, 422):
            raise
        log.warning("could not reply on thread %s of %s: %s", thread, ref.key, exc)
        return False
    return True
