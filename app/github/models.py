"""What the gateway reads from GitHub, as the rest of Tiebreak uses it: narrow, frozen models.

Those read straight from GitHub's JSON keep GitHub's names and only the fields Tiebreak uses
(`extra="ignore"`); the others the gateway makes out of GitHub's answers
(:mod:`app.github.answers`). None of them needs githubkit.
"""

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal, NamedTuple, TypeGuard

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr

RegularMode = Literal["100644", "100755"]
"""Git's modes of a regular file and of an executable one (not a symlink, not a submodule)."""
REGULAR_FILE_MODES: tuple[RegularMode, ...] = ("100644", "100755")


def regular(mode: str) -> TypeGuard[RegularMode]:
    """Whether a tree entry's `mode` is a regular file's."""
    return mode in REGULAR_FILE_MODES


Reaction = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]


def _none_as_empty(value: object) -> object:
    return "" if value is None else value


OrEmpty = Annotated[str, BeforeValidator(_none_as_empty)]
"""A text GitHub answers `null` for when there is none: read as empty."""


class Read(BaseModel):
    """A model read from GitHub's JSON: the fields Tiebreak uses, the others ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class FileAt(NamedTuple):
    """A file at a commit."""

    commit: str
    path: str


class PathKind(StrEnum):
    """What a path is at a commit, as git holds it."""

    NOTHING = "nothing"
    FILE = "file"
    """A blob: a regular file, or a symbolic link (git does not follow it)."""
    DIRECTORY = "directory"
    """A tree, or a submodule's commit."""


class Author(Read):
    """Who wrote a comment or a review."""

    login: OrEmpty = ""
    type: OrEmpty = ""
    """`User`, or `Bot` for an App's bot user."""


class PostedReview(Read):
    """A review just posted: where it is, and who GitHub says wrote it."""

    id: int
    html_url: OrEmpty = ""
    user: Author | None = None


class IssueComment(Read):
    """A comment in the pull request's conversation."""

    id: int
    body: OrEmpty = ""
    user: Author | None = None


class Reacted(Read):
    """One person's reaction to a comment: who."""

    user: Author | None = None


class Reactions(Read):
    """How many people reacted to a comment, by reaction."""

    model_config = ConfigDict(validate_by_name=True)

    thumbs_down: int = Field(default=0, alias="-1")


class ThreadComment(Read):
    """A review comment: the first of a thread (on a line of `path`), or a reply in one."""

    id: int
    body: OrEmpty = ""
    path: OrEmpty = ""
    in_reply_to_id: int | None = None
    """The thread's first comment, for a reply."""
    user: Author | None = None
    reactions: Reactions = Reactions()


class ThreadResolution(BaseModel):
    """Who resolved a review thread, as GitHub tells it."""

    model_config = ConfigDict(frozen=True)

    resolver: str = ""
    """The login of the user who resolved it; empty when GitHub names no user: an App's bot
    user (Tiebreak's too), whom GraphQL's `resolvedBy`, a `User`, cannot be, or a deleted
    account."""
    by_app: bool = False
    """GitHub names the App's own bot user as its resolver."""


class CheckRunState(BaseModel):
    """One of Tiebreak's check runs as GitHub lists it: its id and whether it is done."""

    model_config = ConfigDict(frozen=True)

    id: int
    status: str
    """`queued`, `in_progress` or `completed`."""


class RegisteredApp(Read):
    """The App GitHub registered from a manifest: the part of its answer Tiebreak keeps."""

    id: int
    slug: str
    name: str
    html_url: str
    pem: SecretStr
    webhook_secret: SecretStr


class GitFile(BaseModel):
    """A regular file of a commit: its path, its mode and its exact bytes."""

    model_config = ConfigDict(frozen=True)

    path: str
    mode: RegularMode
    """A commit keeps an executable file executable."""
    content: bytes


class Comparison(BaseModel):
    """How one commit relates to another, and which files differ between them."""

    model_config = ConfigDict(frozen=True)

    status: Literal["identical", "ahead", "behind", "diverged"]
    """`ahead`: the later commit descends from the earlier one."""
    paths: frozenset[str]
    """The files changed from the merge base to the later commit (old and new names)."""
    complete: bool
    """False when GitHub listed as many files as it ever lists: some may be missing."""


class HeadOrigin(StrEnum):
    """Where a pull request's head branch lives."""

    BASE = "base"
    """In the base repository itself."""
    FORK = "fork"
    """In another repository, which GitHub names."""
    UNKNOWN = "unknown"
    """In a repository GitHub no longer names (`head.repo: null`): a fork since deleted. Its
    head commit is still the base repository's to read, but no branch of it is known."""


class PullRequest(BaseModel):
    """The pull request as the review needs it."""

    model_config = ConfigDict(frozen=True)

    number: int
    state: str
    draft: bool
    title: str
    body: str
    author: str
    """The login of whoever opened it."""
    head_sha: str
    head_ref: str
    head_repo: str | None
    """`owner/name` of the repository holding the head branch: another one for a fork; None
    when GitHub names none (a fork since deleted)."""
    head_repo_id: int | None
    base_sha: str
    base_ref: str
    base_repo: str
    base_repo_id: int
    default_branch: str = ""
    """The base repository's default branch (empty if GitHub did not say it)."""
    maintainer_can_modify: bool
    html_url: str
    labels: tuple[str, ...] = ()
    """The names of its labels."""

    @property
    def head_origin(self) -> HeadOrigin:
        """By the repositories' ids: a name is taken again by a repository made anew."""
        if self.head_repo_id is None:
            return HeadOrigin.UNKNOWN
        return HeadOrigin.BASE if self.head_repo_id == self.base_repo_id else HeadOrigin.FORK

    @property
    def from_fork(self) -> bool:
        """Whether its head is anything but the base repository's, a deleted fork's too."""
        return self.head_origin is not HeadOrigin.BASE


class WorkflowRun(Read):
    """One run of a workflow in GitHub Actions, as far as Tiebreak follows it."""

    id: int
    display_title: OrEmpty = ""
    """The run's `run-name`: Tiebreak's run token for the runs it dispatches."""
    status: OrEmpty = ""
    """`queued`, `in_progress`, `completed`..."""
    conclusion: OrEmpty = ""
    """`success`, `failure`, `cancelled`, `timed_out`... once completed."""
    path: OrEmpty = ""
    """The workflow's file: `.github/workflows/<file>`."""
    event: OrEmpty = ""
    """What started it: `workflow_dispatch` for a dispatch, `pull_request`, `push`..."""
    head_branch: OrEmpty = ""
    """The branch it ran from (a dispatch's `ref`)."""
    created_at: datetime | None = None
    actor: Author | None = None
    """Who started it (who dispatched it). A re-run keeps it (and the run's commit and
    inputs); who re-ran it is another field, not read."""

    @property
    def completed(self) -> bool:
        return self.status == "completed"


CLOCK_SKEW = 60.0
"""Seconds a run GitHub started for a dispatch may seem to have been created before it was
sent: GitHub's clock is not the worker's, and GitHub counts whole seconds."""


class Dispatch(BaseModel):
    """A workflow run Tiebreak dispatched, as Tiebreak knows it again among the repository's
    runs, any of which anyone who can push or run a workflow may title as Tiebreak titles
    its own: by the id GitHub answered the dispatch with, else by everything the dispatch
    asked for."""

    model_config = ConfigDict(frozen=True)

    workflow: str
    """The workflow's file in `.github/workflows/`."""
    branch: str
    """The branch it was dispatched from."""
    title: str
    """The title Tiebreak's template gives the run (`Tiebreak <token>`)."""
    since: float
    """When it was dispatched (Unix time, taken before the request was sent)."""
    run_id: int | None = None
    """The run GitHub said the dispatch started (`return_run_details`), if it said."""

    def shows(self, run: WorkflowRun) -> bool:
        """Whether `run` is this dispatch's, who started it aside (the App's bot user must
        have: :meth:`app.github.identity.Authorship.authored`)."""
        if self.run_id is not None:
            return run.id == self.run_id
        return (
            run.display_title == self.title
            and run.path == f".github/workflows/{self.workflow}"
            and run.event == "workflow_dispatch"
            and run.head_branch == self.branch
            and run.created_at is not None
            and run.created_at.timestamp() >= self.since - CLOCK_SKEW
        )
