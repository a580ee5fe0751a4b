"""A pull request's review threads, which GitHub tells through GraphQL only: each thread's
node id, whether it is resolved and by which user, and its first comment's database id (by
which Tiebreak knows its own threads); and resolving or unresolving one, by
`resolveReviewThread` or `unresolveReviewThread` on its node id.

`resolvedBy` is a `User`: GitHub names the person who resolved a thread, but no App's bot user
(a `Bot`, not a `User`; Tiebreak's own resolutions included) and no deleted account.
"""

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from githubkit import GitHub

from app.events import PullKey
from app.github import answers
from app.github.answers import read_graphql

MAX_THREAD_PAGES = 30
"""Pages of 100 review threads read: 3,000 threads."""

REVIEW_THREADS = """
query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          resolvedBy { login }
          comments(first: 1) { nodes { databaseId } }
        }
      }
    }
  }
}
"""

RESOLVE_THREAD = """
mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}
"""

UNRESOLVE_THREAD = """
mutation($threadId: ID!) {
  unresolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}
"""


@dataclass(frozen=True, slots=True)
class ReviewThread:
    node_id: str
    first_comment: int
    resolved: bool
    resolver: str | None = None
    """The login of the user who resolved it; None when GitHub names none."""


async def review_threads(github: GitHub[Any], ref: PullKey) -> AsyncIterator[ReviewThread]:
    """The pull request's review threads, page by page; none if this installation cannot see
    the pull request."""
    cursor: str | None = None
    for _ in range(MAX_THREAD_PAGES):
        data = await github.async_graphql(
            REVIEW_THREADS,
            {"owner": ref.owner, "name": ref.repo, "number": ref.number, "cursor": cursor},
        )
        threads = read_graphql(answers.ReviewThreads, data, "reviewThreads").page
        if threads is None:
            return
        for node in threads.nodes:
            if node.first_comment is not None:
                resolver = node.resolved_by.login if node.resolved_by else ""
                yield ReviewThread(node.id, node.first_comment, node.is_resolved, resolver or None)
        if not threads.page_info.has_next_page:
            return
        cursor = threads.page_info.end_cursor


async def resolve_thread(
    github: GitHub[Any], ref: PullKey, comment_id: int, *, resolved: bool = True
) -> bool:
    """Resolve the thread whose first comment is `comment_id` (with `resolved=False`,
    unresolve it); False if there is none."""
    async for thread in review_threads(github, ref):
        if thread.first_comment == comment_id:
            if thread.resolved != resolved:
                mutation = RESOLVE_THREAD if resolved else UNRESOLVE_THREAD
                await github.async_graphql(mutation, {"threadId": thread.node_id})
            return True
    return False
