"""What a review's agents read beside the diff, fetched from GitHub before its units fan out.

The repository's guidance comes from the base commit, like its config: a pull request cannot
write the rules it is reviewed by. The code around the changes comes from the head commit,
the code under review. Both are read together, in as few requests as GitHub allows
(:meth:`app.github.client.Installation.texts`); a file GitHub cannot give is left out of the
context (and named to the agents as not read), never a reason to fail the review. The files
read are parsed off the event loop, each within a budget (:mod:`app.parsing`).

A pull request chooses how large its files are, so what a review reads of them is bounded
(:class:`ReadingLimits`): their sizes are asked for first, in one request without their
texts, and a file too large, or past what the review may read in all, is not fetched. Its
changes are reviewed without it, the agents told it was not read.
"""

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from agents.context import Reading, changed_files
from agents.diff import Diff
from app.events import PullKey
from app.github.models import FileAt, PullRequest
from app.github.protocol import InstallationClient
from app.parsing import Parsing
from policies.config import RepoConfig
from policies.guidance import Guidance

MAX_CONTEXT_FILES = 300
"""Changed files whose head text is read for context; the rest get none."""
MAX_FILE_BYTES = 512_000
"""A larger changed file is not read: GitHub's GraphQL API gives no more of a text (it cuts
it there), and no agent reads a file that long whole."""
MAX_REVIEW_BYTES = 16 * 2**20
"""Bytes of changed files one review reads in all, some fifty thousand lines of code: what a
review holds of them while it plans, split into lines and parsed, is a few times this."""

File = TypeVar("File")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReadingLimits:
    """How much of its changed files one review reads for context."""

    files: int = MAX_CONTEXT_FILES
    file_bytes: int = MAX_FILE_BYTES
    review_bytes: int = MAX_REVIEW_BYTES

    def within(self, sizes: Iterable[tuple[File, int]]) -> tuple[list[File], list[File]]:
        """The files to read, in the order given, and those left out: larger than
        `file_bytes`, or past `review_bytes` with those before them (a smaller one after
        them may still fit)."""
        chosen: list[File] = []
        left_out: list[File] = []
        total = 0
        for file, size in sizes:
            if size <= self.file_bytes and total + size <= self.review_bytes:
                chosen.append(file)
                total += size
            else:
                left_out.append(file)
        return chosen, left_out


async def reading_for(
    github: InstallationClient,
    ref: PullKey,
    pull: PullRequest,
    config: RepoConfig,
    diff: Diff,
    parsing: Parsing,
    limits: ReadingLimits,
) -> Reading:
    """The guidance of `config` with its guideline files from the base commit, and the files
    of `diff` at the head within `limits`, parsed by `parsing` (unless the config turns
    context off)."""
    guidelines = [FileAt(pull.base_sha, path) for path in config.guidelines]
    sources = await _sources(github, ref, pull, diff, limits) if config.context.enabled else []
    texts = await github.texts(ref, guidelines + sources)
    guidance = Guidance.of(
        config.instructions, config.path_instructions, {f.path: texts[f] for f in guidelines}
    )
    if not config.context.enabled:
        return Reading(guidance=guidance)
    # Checked again on the texts, for the files whose sizes GitHub did not tell.
    kept, left_out = limits.within(
        ((f.path, text), len(text.encode())) for f in sources if (text := texts[f])
    )
    _log_left_out([path for path, _ in left_out])
    read = dict(kept)
    return Reading(read, config.context.max_tokens, guidance, await parsing.outlines(read))


async def _sources(
    github: InstallationClient, ref: PullKey, pull: PullRequest, diff: Diff, limits: ReadingLimits
) -> list[FileAt]:
    """The changed files to read at the head: within `limits`, as far as GitHub tells their
    sizes (a file with no text to give is not asked for)."""
    files = [FileAt(pull.head_sha, f.path) for f in changed_files(diff)][: limits.files]
    sizes = await github.sizes(ref, files)
    known = [(f, size) for f in files if (size := sizes.get(f, 0)) is not None]
    chosen, left_out = limits.within(known)
    _log_left_out([f.path for f in left_out])
    return chosen


def _log_left_out(paths: Sequence[str]) -> None:
    if paths:
        log.info(
            "%d changed files not read for context, too large for the review's limits: %s",
            len(paths),
            ", ".join(paths),
        )
