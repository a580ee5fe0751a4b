"""`tiebreak review` of a pull request by its address, from the terminal: the address checked,
the token found, the pull request fetched, the repository at its head held for the search of
its other files and, with `--post`, the review posted, each failure ended with one line that
says what to do (:mod:`app.cli.exits`).

The repository at the head is read as the App reads it (:func:`app.review.gathering.hold_head`):
GitHub's archive of the head commit, downloaded once into the cache of snapshots under
`TIEBREAK_DATA_DIR/snapshots` (the App's cache, within the App's limits), where a second
review of the same commit finds it. A head that cannot be read never stops the review: it
goes on with the changed files, and says why once.
"""

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from agents.diff import Diff
from agents.errors import DiffError
from agents.review import Review
from app.cli.checkout import checkout_sources
from app.cli.exits import fail
from app.cli.posting import post_review
from app.cli.printable import printable
from app.cli.pull_address import AddressError, PullAddress, parse_address, web_hosts
from app.cli.remote import RemotePull, Token, fetch, find_token, refusal
from app.github.errors import GitHubError
from app.github.personal import PersonalClient
from app.review.gathering import HeadNotRead, ReadingLimits, hold_head, reads_head
from app.settings import get_settings, settings_problem
from app.snapshots.cache import SnapshotCache, snapshots_for
from policies.config import CONFIG_PATH

T = TypeVar("T")


@dataclass(frozen=True)
class AskedPull:
    """The pull request asked for, and the client that reaches it."""

    address: PullAddress
    token: Token | None
    github: PersonalClient
    snapshots: SnapshotCache | None
    """Where the repository at the head is kept; None when the settings keep none."""


def connect(text: str, *, post: bool) -> AskedPull:
    """The pull request `text` names, with a client for it; exit 2 on a bad address, or
    with `--post` and no token."""
    try:
        settings = get_settings()
    except ValidationError as exc:
        fail(settings_problem(exc))
    api_url = str(settings.github_api_url)
    try:
        address = parse_address(text, api_url)
    except AddressError as exc:
        fail(str(exc))
    secret = settings.github_token.get_secret_value() if settings.github_token else None
    token = find_token(secret, web_hosts(api_url)[0].split(":")[0])
    if token is None:
        if post:
            fail("--post needs a GitHub token: set GITHUB_TOKEN (or run gh auth login)")
        click.echo(
            "tiebreak: no GitHub token (GITHUB_TOKEN is unset and gh gives none): reading "
            f"{address} anonymously, as GitHub allows for public repositories",
            err=True,
        )
    github = PersonalClient(token.value if token else None, api_url)
    return AskedPull(address, token, github, snapshots_for(settings))


def fetched(asked: AskedPull) -> RemotePull:
    """The pull request, its diff, config and files; exit 2 when GitHub refuses them."""
    try:
        remote = _run(asked, fetch(asked.github.reads, asked.address.key, ReadingLimits()))
    except DiffError as exc:
        fail(f"{asked.address}'s diff: {exc}")
    pull = remote.pull
    title = printable(pull.title, one_line=True)
    click.echo(f"tiebreak: reviewing {asked.address} at {pull.head_sha[:7]}: {title}", err=True)
    for problem in remote.problems:
        name = problem.source or CONFIG_PATH
        where = f"{name}:{problem.line}" if problem.line else name
        where += "" if problem.source else " at the base"
        said = f"warning: {problem.message}" if problem.warning else problem.message
        click.echo(f"tiebreak: {printable(f'{where}: {said}', one_line=True)}", err=True)
    return remote


@asynccontextmanager
async def head_tree(
    asked: AskedPull, remote: RemotePull, checkout: Path | None = None
) -> AsyncIterator[Path | None]:
    """The directory of the repository at the pull request's head, held while the block
    runs: the work tree of `checkout` when one is given (`--repo`), else GitHub's archive in
    the cache. None when it is not read: said once when it could not be, silently when there
    is nothing to search (docs alone, context off, no cache)."""
    snapshots = asked.snapshots
    if not reads_head(remote.config, remote.diff):
        yield None
    elif checkout is not None:
        yield _checkout_tree(remote.diff, checkout)
    elif snapshots is None:
        yield None
    else:
        async with _archive_tree(asked, remote, snapshots) as root:
            yield root


def _checkout_tree(diff: Diff, directory: Path) -> Path | None:
    """The work tree at `directory` when the diff's files are there at its new side; None,
    said once, when they are not."""
    read = checkout_sources(diff, directory)
    if read.root is None:
        _say(f"the repository's other files not read: {read.unfit}")
    else:
        _say(f"the repository's other files read from {read.root}")
    return read.root


@asynccontextmanager
async def _archive_tree(
    asked: AskedPull, remote: RemotePull, snapshots: SnapshotCache
) -> AsyncIterator[Path | None]:
    """The repository at the head from GitHub's archive, kept in `snapshots`."""
    ref, sha = asked.address.key, remote.pull.head_sha
    at = f"{ref.full_name} at {sha[:7]}"
    downloads: list[str] = []

    def download() -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        # Called only when the cache lacks the commit: a second review reads the disk.
        downloads.append(sha)
        _say(f"downloading {at}, for the code the changes reach in its other files")
        return asked.github.reads.tarball(ref, sha)

    async with AsyncExitStack() as held:
        try:
            root: Path | None = await hold_head(held, snapshots, ref, sha, download)
        except HeadNotRead as exc:
            root = None
            _say(
                f"the repository at {sha[:7]} was not read ({exc}): the agents read the "
                "changed files alone"
            )
        else:
            if not downloads:
                _say(f"{at} read from {snapshots.root}, where an earlier review downloaded it")
        yield root


def posted(asked: AskedPull, remote: RemotePull, review: Review) -> None:
    """Post `review` and say where it is; exit 2 when GitHub refuses it."""
    done, comments = _run(asked, post_review(asked.github, asked.address, remote, review))
    who = f" as {done.user.login}" if done.user and done.user.login else ""
    said = f"{comments} comment{'' if comments == 1 else 's'}"
    click.echo(
        f"tiebreak: posted a review of {asked.address}{who}, {said}: {done.html_url}", err=True
    )


def _say(line: str) -> None:
    click.echo(f"tiebreak: {line}", err=True)


def _run(asked: AskedPull, call: Coroutine[Any, Any, T]) -> T:
    async def run() -> T:
        try:
            return await call
        finally:
            await asked.github.aclose()

    try:
        return asyncio.run(run())
    except GitHubError as exc:
        fail(refusal(exc, asked.address, asked.token))
