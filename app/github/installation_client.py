"""What the jobs need from GitHub on behalf of one installation, as a `Protocol`.

:class:`app.github.client.Installation` is the real one, through githubkit; the jobs are
typed against :class:`InstallationClient`, so they depend on this module and its models
alone (none imports githubkit), and their tests may hand them an implementation in memory.
Every call that fails raises :class:`app.github.errors.GitHubError`.
"""

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from app.bodies import CheckRunUpdate, NewCheckRun, ReviewDraft
from app.events import CommentRef, PullKey, PullRequestRef
from app.github.models import (
    Author,
    CheckRunState,
    Comparison,
    Dispatch,
    FileAt,
    GitFile,
    IssueComment,
    PathKind,
    PullRequest,
    Reaction,
    ThreadComment,
    ThreadResolution,
    WorkflowRun,
)


class GitDataClient(Protocol):
    """The Git Data API, for `/tiebreak apply` (:class:`app.github.git_data.GitData`)."""

    async def head_file(self, repo_full_name: str, path: str, sha: str) -> GitFile | None:
        """The regular file at `path` in commit `sha` of `repo_full_name`, or None."""
        ...

    async def commit_files(
        self,
        repo_full_name: str,
        branch: str,
        parent_sha: str,
        files: Sequence[GitFile],
        message: str,
    ) -> str:
        """Commit `files` on `parent_sha` and move `branch` forward to it; its SHA."""
        ...


class ActionsClient(Protocol):
    """GitHub Actions, for findings' tests (:class:`app.github.actions.Actions`)."""

    async def check_workflow(self, ref: PullKey, workflow: str) -> None:
        """Raise :class:`GitHubError` (403, 404) unless the App may run `workflow`."""
        ...

    async def dispatch(
        self, ref: PullKey, workflow: str, branch: str, inputs: dict[str, str]
    ) -> int | None:
        """The id of the run it started, when GitHub says it (None when it does not)."""
        ...

    async def find_run(
        self, ref: PullKey, dispatch: Dispatch, run_id: int | None = None
    ) -> WorkflowRun | None:
        """The run `dispatch` started (run `run_id`, if it is that run); None when it is not
        (yet) there, or `run_id` is another: the App's bot user started it, from the
        workflow and the branch, after the dispatch, with its title (or with the id GitHub
        answered the dispatch with)."""
        ...

    async def artifact(self, ref: PullKey, run_id: int, name: str, cap: int) -> bytes | None:
        """None when the run has no such artifact; GitHubError past `cap` bytes."""
        ...


class InstallationClient(Protocol):
    """The calls the jobs make on behalf of one installation, documented in full on
    :class:`app.github.client.Installation`; what an implementation must keep to is said
    here."""

    @property
    def git(self) -> GitDataClient: ...

    @property
    def actions(self) -> ActionsClient: ...

    @property
    def retry_backoff(self) -> float:
        """Scales the waits of retries the caller makes itself."""
        ...

    async def pull_request(self, ref: PullKey) -> PullRequest: ...

    async def diff(self, ref: PullKey) -> str: ...

    async def file(self, ref: PullKey, path: str, commit: str | None) -> str | None:
        """None if the commit (None: the default branch's head) has no such file."""
        ...

    async def texts(self, ref: PullKey, files: Iterable[FileAt]) -> dict[FileAt, str | None]:
        """Never fails: None for a file GitHub cannot give."""
        ...

    async def sizes(self, ref: PullKey, files: Iterable[FileAt]) -> dict[FileAt, int | None]:
        """Never fails: a file whose size is not known is left out."""
        ...

    async def kinds(self, ref: PullKey, paths: Iterable[FileAt]) -> dict[FileAt, PathKind]:
        """Never fails: a path whose kind is not known is left out."""
        ...

    def tarball(self, ref: PullKey, sha: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """The snapshot of commit `sha` as a gzipped tar's chunks, streamed; entering it, or
        reading a chunk, raises `GitHubError` as any call does."""
        ...

    async def compare(self, ref: PullKey, base: str, head: str) -> Comparison | None:
        """None when GitHub has not got both commits."""
        ...

    async def thumbs_down(self, ref: PullKey, comment_id: int) -> list[Author]:
        """Who reacted 👎 to the review comment `comment_id`."""
        ...

    async def permission(self, ref: PullKey, login: str) -> str:
        """`admin`, `write`, `read` or `none` (for a stranger too)."""
        ...

    async def create_check_run(self, ref: PullRequestRef, check: NewCheckRun) -> int: ...

    async def update_check_run(
        self, ref: PullRequestRef, check_id: int, update: CheckRunUpdate
    ) -> None: ...

    async def check_run_status(self, ref: PullKey, check_id: int) -> str: ...

    async def run_check_runs(self, ref: PullRequestRef, run_id: str) -> list[CheckRunState]:
        """The App's check runs on the head whose `external_id` is `run_id`, oldest first."""
        ...

    async def create_review(self, ref: PullKey, review: ReviewDraft) -> int: ...

    async def own_review_bodies(self, ref: PullKey) -> list[str]:
        """Of the reviews the App itself posted, and no one else's, oldest first."""
        ...

    async def own_review_comments(self, ref: PullKey) -> list[ThreadComment]:
        """The App's own review comments and replies, oldest first."""
        ...

    async def own_issue_comments(self, ref: PullKey) -> list[IssueComment]:
        """The App's own conversation comments, oldest first."""
        ...

    async def resolved_threads(self, ref: PullKey) -> dict[int, ThreadResolution]:
        """The resolved review threads, by their first comment, with who resolved each."""
        ...

    async def resolve_thread(self, ref: PullKey, comment_id: int) -> bool:
        """False if no thread starts with `comment_id`."""
        ...

    async def unresolve_thread(self, ref: PullKey, comment_id: int) -> bool:
        """False if no thread starts with `comment_id`."""
        ...

    async def review_comment_location(self, ref: PullKey, comment_id: int) -> tuple[str, int]: ...

    async def comment(self, ref: PullKey, body: str) -> int: ...

    async def edit_comment(self, ref: PullKey, comment_id: int, body: str) -> None: ...

    async def edit_review_comment(self, ref: PullKey, comment_id: int, body: str) -> None:
        """Refused with 404 when the comment was deleted meanwhile."""
        ...

    async def reply_in_thread(self, ref: PullKey, comment_id: int, body: str) -> None:
        """Refused with 404 when no thread starts with `comment_id` (deleted meanwhile)."""
        ...

    async def reply(self, ref: PullKey, comment: CommentRef, body: str) -> None: ...

    async def react(self, ref: PullKey, comment: CommentRef, content: Reaction) -> None: ...

    async def ensure_label(self, ref: PullKey, name: str, color: str, about: str) -> None:
        """Fine when the repository has the label already."""
        ...

    async def add_label(self, ref: PullKey, name: str) -> None: ...

    async def remove_label(self, ref: PullKey, name: str) -> None:
        """Fine when the pull request does not have the label."""
        ...
