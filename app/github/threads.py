"""A pull request's review threads, which GitHub tells through GraphQL only: each thread's
node id, whether it is resolved, and its first comment's database id (by which Tiebreak knows
its own threads); and resolving one, by `resolveReviewThread` on its node id."""

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from githubkit import GitHub

from app.events import PullKey

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


@dataclass(frozen=True, slots=True)
class ReviewThread:
    node_id: str
    first_comment: int
    resolved: bool


async def review_threads(github: GitHub[Any], ref: PullKey) -> AsyncIterator[ReviewThread]:
    """The pull request's review threads, page by page; none if this installation cannot see
    the pull request."""
    cursor: str | None = None
    for _ in range(MAX_THREAD_PAGES):
        data = await github.async_graphql(
            REVIEW_THREADS,
            {"owner": ref.owner, "name": ref.repo, "number": ref.number, "cursor": cursor},
        )
        pull = (data.get("repository") or {}).get("pullRequest")
        if pull is None:
            return
        threads = pull["reviewThreads"]
        for node in threads["nodes"]:
            first = node["comments"]["nodes"]
            if first and first[0].get("databaseId") is not None:
                yield ReviewThread(node["id"], int(first[0]["databaseId"]), node["isResolved"])
        if not threads["pageInfo"]["hasNextPage"]:
            return
        cursor = threads["pageInfo"]["endCursor"]


async def resolve_thread(github: GitHub[Any], ref: PullKey, comment_id: int) -> bool:
    """Resolve the thread whose first comment is `comment_id`; False if there is none."""
    async for thread in review_threads(github, ref):
        if thread.first_comment == comment_id:
            if not thread.resolved:
                await github.async_graphql(RESOLVE_THREAD, {"threadId": thread.node_id})
            return True
    return False
