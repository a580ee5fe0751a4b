"""What a review's agents read beside the diff, fetched from GitHub before its units fan out.

The repository's guidance comes from the base commit, like its config: a pull request cannot
write the rules it is reviewed by. The code around the changes comes from the head commit,
the code under review. Each file is read through the contents API, a few at a time, within
the client's retries; a file GitHub cannot give is left out of the context (and named to the
agents as not read), never a reason to fail the review.
"""

import asyncio
import logging
from collections.abc import Iterable

from agents.context import Reading, changed_files
from agents.diff import Diff
from app.events import PullKey
from app.github.client import Installation
from app.github.errors import GitHubError
from app.github.models import PullRequest
from policies.config import RepoConfig
from policies.guidance import Guidance

MAX_CONTEXT_FILES = 300
"""Changed files whose head text is read for context; the rest get none."""
FETCHES = 8
"""Files read from GitHub at once."""

log = logging.getLogger(__name__)


async def reading_for(
    github: Installation, ref: PullKey, pull: PullRequest, config: RepoConfig, diff: Diff
) -> Reading:
    """The guidance of `config` with its guideline files from the base commit, and each file
    of `diff` at the head (unless the config turns context off)."""
    guidelines = await _texts(github, ref, config.guidelines, pull.base_sha)
    guidance = Guidance.of(config.instructions, config.path_instructions, guidelines)
    if not config.context.enabled:
        return Reading(guidance=guidance)
    paths = [f.path for f in changed_files(diff)][:MAX_CONTEXT_FILES]
    texts = await _texts(github, ref, paths, pull.head_sha)
    sources = {path: text for path, text in texts.items() if text}
    return Reading(sources, config.context.max_tokens, guidance)


async def _texts(
    github: Installation, ref: PullKey, paths: Iterable[str], commit: str
) -> dict[str, str | None]:
    slots = asyncio.Semaphore(FETCHES)

    async def read(path: str) -> str | None:
        async with slots:
            try:
                return await github.file(ref, path, commit)
            except GitHubError as exc:
                log.warning("could not read %s at %s: %s", path, commit[:7], exc)
                return None

    paths = list(dict.fromkeys(paths))
    return dict(zip(paths, await asyncio.gather(*(read(p) for p in paths)), strict=True))
