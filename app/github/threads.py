"""Resolving a review thread, which GitHub allows through GraphQL only: the thread's node id
is found by its first comment's database id, then `resolveReviewThread` is called on it."""

from typing import Any

from githubkit import GitHub

from app.events import PullKey

MAX_THREAD_PAGES = 30
"""Pages of 100 review threads read looking for one: 3,000 threads."""

THREAD_IDS = """
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


async def resolve_thread(github: GitHub[Any], ref: PullKey, comment_id: int) -> bool:
    """Resolve the thread whose first comment is `comment_id`; False if there is none."""
    cursor: str | None = None
    for _ in range(MAX_THREAD_PAGES):
        data = await github.async_graphql(
            THREAD_IDS,
            {"owner": ref.owner, "name": ref.repo, "number": ref.number, "cursor": cursor},
        )
        pull = (data.get("repository") or {}).get("pullRequest")
        if pull is None:  # not visible to this installation
            return False
        threads = pull["reviewThreads"]
        for node in threads["nodes"]:
            first = node["comments"]["nodes"]
            if first and first[0].get("databaseId") == comment_id:
                if not node["isResolved"]:
                    await github.async_graphql(RESOLVE_THREAD, {"threadId": node["id"]})
                return True
        if not threads["pageInfo"]["hasNextPage"]:
            return False
        cursor = threads["pageInfo"]["endCursor"]
    return False
