"""What a review's agents read beside the diff, fetched from GitHub before its units fan out.

The repository's guidance comes from the base commit, like its config: a pull request cannot
write the rules it is reviewed by. The code around the changes comes from the head commit,
the code under review. Both are read together, in as few requests as GitHub allows
(:meth:`app.github.client.Installation.texts`); a file GitHub cannot give is left out of the
context (and named to the agents as not read), never a reason to fail the review. The files
read are parsed off the event loop, each within a budget (:mod:`app.parsing`).

A pull request chooses how large its files are, so what a review reads of them is bounded
(:class:`ReadingLimits`). When its changed files could not together pass what the review may
read in all, even each as long a text as GitHub gives (:data:`MAX_FILE_BYTES`), their texts
are asked for at once: one round trip. Otherwise their sizes are asked for first, in one
request without their texts, and a file too large, or past what the review may read in all,
is not fetched. Either way the texts are checked again as they come: a file left out has its
changes reviewed without it, the agents told it was not read.

The repository at the head is read whole too, once per review of code (a pull request of
docs alone has nothing to search for), as GitHub's archive of the head commit kept in the
worker's cache (:mod:`app.snapshots`): a second review of the same
commit reads it from the disk. The download, and the search in it, run beside the requests
for the changed files' sizes and texts and their parse, neither waiting for the other. A
snapshot that cannot be had (GitHub refuses or fails the download, the repository is past
the cache's limits, its archive is unsafe) never fails the review: it goes on with the
changed files, and the summary says so once (:attr:`HeadReading.head_not_read`). What the
repository's other files tell about the changes (the definitions they use, their callers,
their tests) is searched for in the snapshot while the review holds it, in a parsing process
within bounds (:meth:`app.parsing.Parsing.related`). `tiebreak review` of a pull request by
its address holds the head the same way (:func:`hold_head`), in the same cache, and says why
it could not in the same words (:class:`HeadNotRead`).
"""

import asyncio
import logging
from collections.abc import Iterable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

from agents.context.reading import Reading, changed_files
from agents.context.related import Related
from agents.context.scopes import Outline, parsable
from agents.conventions import ProjectTests
from agents.diff import Diff
from app.events import PullKey
from app.github.errors import GitHubError, TokenRefused
from app.github.installation_client import InstallationClient
from app.github.models import FileAt, PullRequest
from app.parsing import Parsing
from app.review.failures import token_refusal
from app.review.together import together
from app.snapshots.cache import Fetch, SnapshotCache
from app.snapshots.limits import SnapshotRefused
from app.source_tree import conventions_in
from policies.config import RepoConfig
from policies.errors import TiebreakError
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

    def bound(self, files: int) -> bool:
        """Whether the texts of `files` files cannot together pass `review_bytes`, each as long
        as GitHub gives one: then they need not be sized before they are fetched."""
        return files * MAX_FILE_BYTES <= self.review_bytes

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


@dataclass(frozen=True)
class HeadReading:
    """What a review read beside its diff."""

    reading: Reading
    root: Path | None = None
    """The directory of the repository at the head, in the worker's cache; None when it was
    not read. It stays there until the cache evicts it: what is read across its files is
    read in :func:`reading_for`, while the review holds it."""
    head_not_read: str | None = None
    """Why the repository at the head was not read whole, fit for the summary; None when it
    was, or when no snapshot was asked for."""


async def reading_for(
    github: InstallationClient,
    ref: PullKey,
    pull: PullRequest,
    config: RepoConfig,
    diff: Diff,
    parsing: Parsing,
    limits: ReadingLimits,
    snapshots: SnapshotCache | None = None,
) -> HeadReading:
    """The guidance of `config` with its guideline files from the base commit, and the files
    of `diff` at the head within `limits`, parsed by `parsing`, with the repository at the
    head from `snapshots` (unless the config turns context off)."""
    guidelines = [FileAt(pull.base_sha, path) for path in config.guidelines]
    command = config.verify.command
    if not config.context.enabled:
        texts = await github.texts(ref, guidelines)
        guidance = _guidance(config, guidelines, texts)
        conventions = conventions_in(None, command, diff.paths)
        return HeadReading(Reading(guidance=guidance, conventions=conventions))
    if not reads_head(config, diff):
        snapshots = None
    async with AsyncExitStack() as held:
        # The repository at the head is downloaded and searched while the changed files are
        # asked for and parsed: neither waits for the other's requests.
        searched, (texts, read, outlines) = await together(
            _searched(held, github, ref, pull, snapshots, parsing, diff, command),
            _changed(github, ref, pull, diff, parsing, limits, guidelines),
        )
        reading = Reading(
            read,
            config.context.max_tokens,
            _guidance(config, guidelines, texts),
            outlines,
            searched.related,
            conventions=searched.conventions,
        )
        return HeadReading(reading, searched.root, searched.head_not_read)


class _Searched(NamedTuple):
    """The repository at the head (held), or why not, and what was found in it."""

    root: Path | None
    head_not_read: str | None
    related: Related | None
    conventions: ProjectTests | None


async def _searched(
    held: AsyncExitStack,
    github: InstallationClient,
    ref: PullKey,
    pull: PullRequest,
    snapshots: SnapshotCache | None,
    parsing: Parsing,
    diff: Diff,
    command: str | None,
) -> _Searched:
    """The repository at the head, held by `held`, searched for the code the changes reach in
    its other files and for how its tests are laid out."""
    root, head_not_read = await _head(held, github, ref, pull, snapshots)
    related, conventions = await together(
        _related(parsing, root, diff), _conventions(root, command, diff.paths)
    )
    return _Searched(root, head_not_read, related, conventions)


async def _conventions(
    root: Path | None, command: str | None, paths: Sequence[str]
) -> ProjectTests | None:
    """How the repository's tests are laid out: its tree listed off the event loop, when there
    is one to list."""
    if root is None or command is None:  # nothing to list: no thread for it
        return conventions_in(None, command, paths)
    return await asyncio.to_thread(conventions_in, root, command, paths)


async def _changed(
    github: InstallationClient,
    ref: PullKey,
    pull: PullRequest,
    diff: Diff,
    parsing: Parsing,
    limits: ReadingLimits,
    guidelines: list[FileAt],
) -> tuple[dict[FileAt, str | None], dict[str, str], dict[str, Outline]]:
    """The texts of the guidelines and of the changed files at the head within `limits`, the
    changed files' read (by path) and their outlines."""
    sources, too_large = await head_sources(github, ref, pull, diff, limits)
    _log_left_out([f.path for f in too_large])
    texts = await github.texts(ref, guidelines + sources)
    # Checked again on the texts, for the files whose sizes GitHub did not tell.
    kept, left_out = limits.within(
        ((f.path, text), len(text.encode())) for f in sources if (text := texts[f])
    )
    _log_left_out([path for path, _ in left_out])
    read = dict(kept)
    return texts, read, await parsing.outlines(read)


async def _related(parsing: Parsing, root: Path | None, diff: Diff) -> Related | None:
    return None if root is None else await parsing.related(root, diff)


def _guidance(
    config: RepoConfig, guidelines: list[FileAt], texts: dict[FileAt, str | None]
) -> Guidance:
    return Guidance.of(
        config.instructions, config.path_instructions, {f.path: texts[f] for f in guidelines}
    )


async def _head(
    held: AsyncExitStack,
    github: InstallationClient,
    ref: PullKey,
    pull: PullRequest,
    snapshots: SnapshotCache | None,
) -> tuple[Path | None, str | None]:
    """The repository at the head, held by `held`, or why it was not read."""
    if snapshots is None:
        return None, None
    # Asked of the pull request's repository, which has its head commit, a fork's too.
    sha = pull.head_sha
    try:
        return await hold_head(held, snapshots, ref, sha, lambda: github.tarball(ref, sha)), None
    except HeadNotRead as exc:
        # What caused it (GitHub's answer, the worker's paths) is the operators'; the reason
        # is the summary's.
        log.warning(
            "the repository at %s was not read: %s",
            sha[:7],
            _causes(exc),
            exc_info=isinstance(exc.__cause__, OSError),
        )
        return None, str(exc)


def _causes(exc: BaseException) -> str:
    """What caused `exc`, down to the first error raised (the extraction's, GitHub's)."""
    said: list[str] = []
    cause = exc.__cause__
    while cause is not None:
        said.append(str(cause) or type(cause).__name__)
        cause = cause.__cause__
    return ": ".join(said)


class HeadNotRead(TiebreakError):
    """The repository at a pull request's head could not be read whole; the review goes on
    with its changed files. Its message says why, fit for the summary and the terminal."""


def reads_head(config: RepoConfig, diff: Diff) -> bool:
    """Whether a review of `diff` under `config` reads the repository at the head: its
    context is on and it changes code (only code is searched across files, so a pull request
    of docs alone downloads nothing)."""
    return config.context.enabled and any(parsable(f.path) for f in changed_files(diff))


async def hold_head(
    held: AsyncExitStack, snapshots: SnapshotCache, ref: PullKey, sha: str, fetch: Fetch
) -> Path:
    """The directory of commit `sha` of `ref`'s repository in `snapshots`, downloaded through
    `fetch` unless it is there, held by `held` (not evicted until it is left). Raises
    :class:`HeadNotRead` when GitHub refuses or fails the download, the snapshot is refused
    (too large, its archive unsafe) or the disk cannot keep it."""
    try:
        return await held.enter_async_context(snapshots.tree(ref.full_name, sha, fetch))
    except TokenRefused as exc:
        raise HeadNotRead(token_refusal(exc)) from exc
    except GitHubError as exc:
        said = f"GitHub answered {exc.status}" if exc.status else "GitHub could not be reached"
        raise HeadNotRead(f"{said} to the download of its archive") from exc
    except SnapshotRefused as exc:
        raise HeadNotRead(str(exc)) from exc
    except OSError as exc:
        # strerror ("No space left on device") names no path of the disk.
        raise HeadNotRead(f"it could not be kept on disk: {exc.strerror or 'OSError'}") from exc


async def head_sources(
    github: InstallationClient, ref: PullKey, pull: PullRequest, diff: Diff, limits: ReadingLimits
) -> tuple[list[FileAt], list[FileAt]]:
    """The changed files whose texts to ask for at the head, and those too large to read.
    Files whose texts `limits` bound whatever their sizes are all asked for, without a round
    trip for their sizes (their texts are checked as they come); of others, those within
    `limits` as far as GitHub tells their sizes (a file with no text to give is not asked
    for)."""
    files = [FileAt(pull.head_sha, f.path) for f in changed_files(diff)][: limits.files]
    if limits.bound(len(files)):
        return files, []
    sizes = await github.sizes(ref, files)
    known = [(f, size) for f in files if (size := sizes.get(f, 0)) is not None]
    return limits.within(known)


def _log_left_out(paths: Sequence[str]) -> None:
    if paths:
        log.info(
            "%d changed files not read for context, too large for the review's limits: %s",
            len(paths),
            ", ".join(paths),
        )
