"""Files' texts at commits, many in one GraphQL request rather than one REST call each.

One query reads up to `MAX_BLOBS` files, each an aliased `object(expression:)` of the
repository with its `"<commit>:<path>"` expression passed as a variable (a path is the pull
request author's to choose: it never enters the query's text), and the batches of one read
are sent together. Files at several commits (guidelines at the base, sources at the head)
share a request. A file reads as None when GitHub has no blob there (no such path, a
directory, a submodule), when it is binary, or when GitHub truncated its text (it cuts a
text at 512,000 bytes). The same query without the texts tells the files' sizes, so that a
caller can choose which texts to ask for before any is sent, and with the size alone, what a
path is: a blob (a file or a symlink), another object (a directory, a submodule) or nothing.

A failed request never fails the caller: when GitHub answers a batch with GraphQL `errors`
(githubkit raises them; a GraphQL rate limit among them), with a status the client's retries
did not get past (a 5xx, a rate limit too long to wait), with no answer at all, or with an
answer that is not GraphQL's, a warning is logged and that batch's files are read one by
one through the contents API (`file_text`, `REST_READS` at a time), where a file GitHub
cannot give reads as None too.
"""

import asyncio
import base64
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from githubkit import GitHub
from githubkit.exception import GitHubException, RequestFailed
from githubkit.utils import UNSET
from pydantic import ValidationError

from app.events import PullKey
from app.github import answers
from app.github.answers import BlobNode, read, read_graphql
from app.github.errors import GitHubError, translated
from app.github.models import FileAt, PathKind

MAX_BLOBS = 100
"""Files read by one GraphQL request; a read of more sends several, at once."""
REST_READS = 8
"""Files read at once through the contents API when a GraphQL request failed."""
BLOB_FIELDS = "text isBinary isTruncated byteSize"
SIZE_FIELDS = "isBinary byteSize"
KIND_FIELDS = "byteSize"

log = logging.getLogger(__name__)

T = TypeVar("T")


async def read_texts(
    github: GitHub[Any], ref: PullKey, files: Iterable[FileAt]
) -> dict[FileAt, str | None]:
    """Each file's text, or None when it has none to give (see the module's docstring)."""
    return await _in_batches(files, functools.partial(_batch, github, ref))


async def read_sizes(
    github: GitHub[Any], ref: PullKey, files: Iterable[FileAt]
) -> dict[FileAt, int | None]:
    """Each file's size in bytes, or None when it has no text to give (no blob there, or a
    binary one). A file whose request GitHub failed is left out: its size is not known."""
    unknown = "the sizes of %d files are not known: %s"
    return await _in_batches(files, _each(github, ref, SIZE_FIELDS, _size, unknown))


async def read_kinds(
    github: GitHub[Any], ref: PullKey, paths: Iterable[FileAt]
) -> dict[FileAt, PathKind]:
    """What each path is at its commit: a blob (a file or a symlink), a tree or a submodule,
    or nothing. A path whose request GitHub failed is left out: what it is is not known."""
    unknown = "what %d paths are is not known: %s"
    return await _in_batches(paths, _each(github, ref, KIND_FIELDS, _kind, unknown))


async def file_text(github: GitHub[Any], ref: PullKey, path: str, commit: str | None) -> str | None:
    """A file's text at a commit (None: at the default branch's head) through the contents
    API, or None if it does not exist there; githubkit's exception when GitHub fails the
    call."""
    at = UNSET if commit is None else commit
    try:
        response = await github.rest.repos.async_get_content(ref.owner, ref.repo, path, ref=at)
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            return None
        raise
    content = read(answers.Contents, response).file
    if content is None:
        return None
    return base64.b64decode(content).decode("utf-8", errors="replace")


@functools.cache
def blobs_query(count: int, fields: str = BLOB_FIELDS) -> str:
    """The query reading `fields` of `count` files: `$e0`… their expressions, `f0`… their
    objects."""
    expressions = "".join(f", $e{i}: String!" for i in range(count))
    objects = "".join(
        f"    f{i}: object(expression: $e{i}) {{ ... on Blob {{ {fields} }} }}\n"
        for i in range(count)
    )
    return (
        f"query($owner: String!, $name: String!{expressions}) {{\n"
        f"  repository(owner: $owner, name: $name) {{\n{objects}  }}\n}}\n"
    )


async def _in_batches(
    files: Iterable[FileAt], read: Callable[[list[FileAt]], Awaitable[dict[FileAt, T]]]
) -> dict[FileAt, T]:
    """What `read` answers of each file (each once), `MAX_BLOBS` files a request, the requests
    sent together."""
    unique = list(dict.fromkeys(files))
    batches = [unique[i : i + MAX_BLOBS] for i in range(0, len(unique), MAX_BLOBS)]
    answered = await asyncio.gather(*(read(batch) for batch in batches))
    return {file: value for values in answered for file, value in values.items()}


def _each(
    github: GitHub[Any],
    ref: PullKey,
    fields: str,
    value: Callable[[BlobNode | None], T],
    unknown: str,
) -> Callable[[list[FileAt]], Awaitable[dict[FileAt, T]]]:
    """A batch's read of `fields`, each file's `value` made of its blob; a batch GitHub failed
    is left out, said in the log by `unknown` (with how many files, and why)."""

    async def batch(files: list[FileAt]) -> dict[FileAt, T]:
        answered = await _objects(github, ref, files, fields)
        if isinstance(answered, str):
            log.warning(unknown, len(files), answered)
            return {}
        return {file: value(answered.get(f"f{i}")) for i, file in enumerate(files)}

    return batch


async def _batch(
    github: GitHub[Any], ref: PullKey, files: list[FileAt]
) -> dict[FileAt, str | None]:
    answered = await _objects(github, ref, files, BLOB_FIELDS)
    if isinstance(answered, dict):
        return {file: _text(file, answered.get(f"f{i}")) for i, file in enumerate(files)}
    log.warning("reading %d files through the contents API instead: %s", len(files), answered)
    return await _one_by_one(github, ref, files)


async def _objects(
    github: GitHub[Any], ref: PullKey, files: list[FileAt], fields: str
) -> dict[str, BlobNode | None] | str:
    """The repository's objects `f0`… (`fields` of each file's blob), or why GitHub gave
    none."""
    variables: dict[str, str] = {"owner": ref.owner, "name": ref.repo}
    variables.update((f"e{i}", f"{f.commit}:{f.path}") for i, f in enumerate(files))
    try:
        data = await github.async_graphql(blobs_query(len(files), fields), variables)
        repository = read_graphql(answers.Blobs, data, "blobs").repository
    except GitHubException as exc:
        return str(translated(exc))
    except ValidationError as exc:
        return f"GitHub's answer was not GraphQL's: {exc.error_count()} errors"
    except GitHubError as exc:
        return str(exc)
    return "GitHub resolved no repository" if repository is None else repository


def _text(file: FileAt, node: BlobNode | None) -> str | None:
    """A blob's text; None for no object, one that is not a blob (an empty selection), a
    binary blob or a truncated text."""
    if node is None:
        return None
    if node.is_truncated:
        log.info("%s at %s left out: %s bytes", file.path, file.commit[:7], node.byte_size)
        return None
    return node.text if node.is_binary is not True else None


def _kind(node: BlobNode | None) -> PathKind:
    """No object, a blob (its fields answered), or another object (the Blob fragment selected
    nothing of it: a tree, or a submodule's commit)."""
    if node is None:
        return PathKind.NOTHING
    return PathKind.DIRECTORY if node.byte_size is None else PathKind.FILE


def _size(node: BlobNode | None) -> int | None:
    """A blob's size; None for no object, one that is not a blob, or a binary blob."""
    if node is None or node.is_binary is not False:
        return None
    return node.byte_size


async def _one_by_one(
    github: GitHub[Any], ref: PullKey, files: list[FileAt]
) -> dict[FileAt, str | None]:
    slots = asyncio.Semaphore(REST_READS)

    async def read(file: FileAt) -> str | None:
        async with slots:
            try:
                return await file_text(github, ref, file.path, file.commit)
            except GitHubException as exc:
                log.warning(
                    "could not read %s at %s: %s", file.path, file.commit[:7], translated(exc)
                )
                return None

    return dict(zip(files, await asyncio.gather(*(read(f) for f in files)), strict=True))
