"""What a later review of a pull request covers: the files changed since the head reviewed
last, where that is safe; every file otherwise, saying why."""

import logging

from app.events import PullRequestRef
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.publishing.publication import RunRecord
from app.publishing.rereview import RunScope
from policies.config import RepoConfig

log = logging.getLogger(__name__)


async def scope_since(
    github: InstallationClient, ref: PullRequestRef, config: RepoConfig, earlier: RunRecord | None
) -> RunScope:
    """Review the files changed since `earlier`'s head, where that is safe; every file after
    a force-push or a rebase, a config change, or a partly failed review."""
    if earlier is None:
        return RunScope.full("")
    old, new = earlier.ref.head_sha, ref.head_sha
    if old == new:
        return RunScope.full("a review of the same commit was asked for")
    if earlier.config != config:
        return RunScope.full("the repository's config changed")
    if earlier.review.failed_units:
        return RunScope.full("parts of the last review were not reviewed")
    try:
        comparison = await github.compare(ref, old, new)
    except GitHubError as exc:
        log.warning("could not compare %s with %s on %s: %s", old, new, ref.key, exc)
        return RunScope.full(f"GitHub could not compare it with {old[:7]}")
    if comparison is None or comparison.status != "ahead":
        return RunScope.full(
            f"{old[:7]}, reviewed last, is no longer in its history (a force-push or rebase)"
        )
    if not comparison.complete:
        return RunScope.full(f"too many files changed since {old[:7]} to list them")
    return RunScope.changed_since(old, comparison.paths)
