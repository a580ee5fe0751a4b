"""GitHub's answers as the gateway reads them, before it makes them into what the rest of
Tiebreak uses (:mod:`app.github.models`): for each endpoint called, the fields read and no
other (`extra="ignore"`), validated as they arrive.

An answer that is not what GitHub documents fails its call with a :class:`GitHubError`, as a
refused call does, rather than with a `KeyError` somewhere in a job.
"""

from typing import Any, Literal, Protocol, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, RootModel, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from app.github.errors import GitHubError
from app.github.models import Author, OrEmpty, PullRequest, Read

M = TypeVar("M")


class Answered(Protocol):
    """A response of githubkit's, as far as reading it goes."""

    @property
    def content(self) -> bytes: ...

    @property
    def url(self) -> httpx.URL: ...


def read(shape: type[M], response: Answered) -> M:
    """`response`'s JSON as `shape` (a model, or a list of them)."""
    try:
        return _adapter(shape).validate_json(response.content)
    except ValidationError as exc:
        raise _unexpected(response.url.path, exc) from exc


def read_graphql(shape: type[M], data: object, query: str) -> M:
    """A GraphQL answer's `data` as `shape`; `query` names it in the error."""
    try:
        return _adapter(shape).validate_python(data)
    except ValidationError as exc:
        raise _unexpected(f"GraphQL's {query}", exc) from exc


_ADAPTERS: dict[object, TypeAdapter[Any]] = {}
"""The validator of each shape read so far: the shapes are the gateway's own, a few dozen."""


def _adapter(shape: type[M]) -> TypeAdapter[M]:
    """The validator of `shape`, made once per process: making one builds its schema again,
    40 µs for a list of comments, a hundred times what validating an empty list takes."""
    adapter = _ADAPTERS.get(shape)
    if adapter is None:
        adapter = _ADAPTERS[shape] = TypeAdapter(shape)
    return adapter


def _unexpected(what: str, exc: ValidationError) -> GitHubError:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the answer"
    return GitHubError(f"GitHub's answer from {what} is not as documented: {where}: {first['msg']}")


class Created(Read):
    """What creating a check run, a review or a comment answers: the new one's id."""

    id: int


class _Repo(Read):
    id: int
    full_name: str
    default_branch: OrEmpty = ""


class _Branch(Read):
    sha: str
    ref: str


class _HeadBranch(_Branch):
    repo: _Repo | None = None
    """None when the repository is gone (a deleted fork)."""


class _BaseBranch(_Branch):
    repo: _Repo


class _Label(Read):
    name: str


class Pull(Read):
    """`GET /repos/{owner}/{repo}/pulls/{number}`."""

    number: int
    state: str
    draft: bool | None = None
    title: OrEmpty = ""
    body: OrEmpty = ""
    user: Author | None = None
    head: _HeadBranch
    base: _BaseBranch
    maintainer_can_modify: bool | None = None
    html_url: OrEmpty = ""
    labels: tuple[_Label, ...] = ()

    def pull_request(self) -> PullRequest:
        """As the review needs it. A head repository GitHub does not name stays unnamed: it
        is not the base's (:class:`app.github.models.HeadOrigin`)."""
        head_repo = self.head.repo
        return PullRequest(
            number=self.number,
            state=self.state,
            draft=bool(self.draft),
            title=self.title,
            body=self.body,
            author=self.user.login if self.user else "",
            head_sha=self.head.sha,
            head_ref=self.head.ref,
            head_repo=head_repo.full_name if head_repo else None,
            head_repo_id=head_repo.id if head_repo else None,
            base_sha=self.base.sha,
            base_ref=self.base.ref,
            base_repo=self.base.repo.full_name,
            base_repo_id=self.base.repo.id,
            default_branch=self.base.repo.default_branch,
            maintainer_can_modify=bool(self.maintainer_can_modify),
            html_url=self.html_url,
            labels=tuple(label.name for label in self.labels),
        )


class ChangedFile(Read):
    """A file of `GET /pulls/{number}/files`, or of a comparison of two commits."""

    filename: str
    previous_filename: str | None = None
    """Its name before, for a file renamed or copied."""
    status: str | None = None
    patch: str | None = None
    """None for a binary file, or one too large for GitHub to show."""
    changes: int = 0


class CommitComparison(Read):
    """`GET /repos/{owner}/{repo}/compare/{base}...{head}`."""

    status: Literal["identical", "ahead", "behind", "diverged"]
    files: list[ChangedFile] | None = None


class CheckRun(Read):
    status: str


class _ListedCheckRun(CheckRun):
    id: int
    external_id: str | None = None


class CheckRuns(Read):
    """A page of the check runs on a commit."""

    check_runs: list[_ListedCheckRun]


class Permission(Read):
    permission: str | None = None


class CommentLocation(Read):
    """A review comment's place: a comment on a line the diff no longer shows has no `line`,
    only the `original_line` it was made on."""

    path: str
    line: int | None = None
    original_line: int | None = None


class PullRequestReview(Read):
    body: OrEmpty = ""
    user: Author | None = None


class App(Read):
    """`GET /app`."""

    slug: str | None = None


class _Content(Read):
    type: str
    content: OrEmpty = ""
    """Base64, for a file."""


class Contents(RootModel[_Content | list[_Content]]):
    """`GET /repos/{owner}/{repo}/contents/{path}`: a file, or a directory's entries."""

    model_config = ConfigDict(frozen=True)

    @property
    def file(self) -> str | None:
        """The file's content, base64; None for anything but a file."""
        found = self.root
        return found.content if isinstance(found, _Content) and found.type == "file" else None


class TreeEntry(Read):
    path: str
    type: str
    """`blob`, `tree`, or `commit` for a submodule."""
    mode: str
    sha: str


class Tree(Read):
    tree: list[TreeEntry]


class Blob(Read):
    content: str
    """Base64."""


class Sha(Read):
    """What creating a blob, a tree or a commit answers."""

    sha: str


class GitCommit(Read):
    tree: Sha


class _GraphQL(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", alias_generator=to_camel)


class BlobNode(_GraphQL):
    """A repository's object at `"<commit>:<path>"` as a blob; every field None for an object
    that is not one (the query's fragment selects nothing of it)."""

    text: str | None = None
    is_binary: bool | None = None
    is_truncated: bool | None = None
    byte_size: int | None = None


class Blobs(_GraphQL):
    repository: dict[str, BlobNode | None] | None = None
    """Each file's object, by its alias (`f0`…); None for a file with none."""


class _CommentId(_GraphQL):
    database_id: int | None = None


class _FirstComments(_GraphQL):
    nodes: list[_CommentId]


class _User(_GraphQL):
    login: str = ""


class ThreadNode(_GraphQL):
    id: str
    is_resolved: bool
    resolved_by: _User | None = None
    """The user who resolved it (a `User`: null for an App's bot user, or a deleted one)."""
    comments: _FirstComments

    @property
    def first_comment(self) -> int | None:
        first = self.comments.nodes
        return first[0].database_id if first else None


class _PageInfo(_GraphQL):
    has_next_page: bool
    end_cursor: str | None = None


class _ThreadPage(_GraphQL):
    page_info: _PageInfo
    nodes: list[ThreadNode]


class _PullThreads(_GraphQL):
    review_threads: _ThreadPage


class _RepositoryThreads(_GraphQL):
    pull_request: _PullThreads | None = None


class ReviewThreads(_GraphQL):
    """One page of a pull request's review threads; no pull request if this installation
    cannot see it."""

    repository: _RepositoryThreads | None = None

    @property
    def page(self) -> _ThreadPage | None:
        pull = self.repository.pull_request if self.repository else None
        return pull.review_threads if pull else None
