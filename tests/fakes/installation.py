"""One installation's GitHub in memory: the `InstallationClient` protocol the jobs are typed
against, for the tests of a job that needs only a few of GitHub's answers.

It holds one pull request as the App sees it: files at commits, the App's own reviews, review
threads and conversation comments, which threads were resolved (and by whom) or marked 👎,
check runs, labels and permissions. It records each call by name (`calls`) and fails the next
calls of a method as GitHub would (`fail_next`). It checks nothing GitHub checks and knows no other
author than the App: the end-to-end tests drive the real client against the fake GitHub
server for that (:mod:`tests.fakes.github_api`), and `tests/fakes/test_installation.py` holds
this fake to the real client's answers.
"""

import itertools
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from app.bodies import CheckRunUpdate, NewCheckRun, ReviewDraft
from app.events import CommentRef, PullKey, PullRequestRef
from app.github.errors import GitHubError
from app.github.installation_client import ActionsClient
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
    Reactions,
    ThreadComment,
    ThreadResolution,
    WorkflowRun,
)


@dataclass
class FakeGitData:
    """The Git Data API in memory: files by (repository, commit, path), and the commits made."""

    files: dict[tuple[str, str, str], GitFile] = field(default_factory=dict)
    commits: list[tuple[str, str, list[GitFile], str]] = field(default_factory=list)
    """(repository, branch, files, message) of each commit made, in order."""

    async def head_file(self, repo_full_name: str, path: str, sha: str) -> GitFile | None:
        return self.files.get((repo_full_name, sha, path))

    async def commit_files(
        self,
        repo_full_name: str,
        branch: str,
        parent_sha: str,
        files: Sequence[GitFile],
        message: str,
    ) -> str:
        self.commits.append((repo_full_name, branch, list(files), message))
        return f"{len(self.commits):040x}"


class FakeActions:
    """GitHub Actions of a repository with no workflow: every workflow is missing (404)."""

    async def check_workflow(self, ref: PullKey, workflow: str) -> None:
        raise GitHubError(f"no workflow {workflow}", status=404)

    async def dispatch(
        self, ref: PullKey, workflow: str, branch: str, inputs: dict[str, str]
    ) -> int | None:
        raise GitHubError(f"no workflow {workflow}", status=404)

    async def find_run(
        self, ref: PullKey, dispatch: Dispatch, run_id: int | None = None
    ) -> WorkflowRun | None:
        return None

    async def artifact(self, ref: PullKey, run_id: int, name: str, cap: int) -> bytes | None:
        return None


class FakeInstallation:
    """An installation's client in memory (see the module's docstring)."""

    def __init__(self, pull: PullRequest | None = None, *, diff: str = "") -> None:
        self.pull = pull
        self.diff_text = diff
        self.files: dict[FileAt, str] = {}
        self.comparisons: dict[tuple[str, str], Comparison] = {}
        self.permissions: dict[str, str] = {}
        self.reviews: list[ReviewDraft] = []
        self.review_comments: list[ThreadComment] = []
        self.issue_comments: list[IssueComment] = []
        self.resolved: dict[int, ThreadResolution] = {}
        """The resolved threads by their first comment, with who resolved each (the App's
        own resolving names no user, as on GitHub)."""
        self.check_runs: dict[int, list[NewCheckRun | CheckRunUpdate]] = {}
        self.labels: set[str] = set()
        self.pull_labels: list[str] = []
        self.reactions: list[tuple[CommentRef, Reaction]] = []
        self.thumbs_downs: dict[int, list[Author]] = {}
        """Who reacted 👎 to each review comment, by its id."""
        self.unanswered: set[FileAt] = set()
        """Paths GitHub does not say what they are (`kinds` leaves them out)."""
        self.calls: list[str] = []
        """The name of each call made, in order."""
        self.git = FakeGitData()
        self.actions: ActionsClient = FakeActions()
        """GitHub Actions with no workflow, unless a test gives another."""
        self.retry_backoff = 0.0
        self._lines: dict[int, int] = {}
        self._failures: dict[str, list[GitHubError]] = {}
        self._ids = itertools.count(1001)

    def fail_next(self, call: str, status: int | None, times: int = 1) -> None:
        """The next `times` calls of the method `call` fail as GitHub answering `status`
        (None: no answer came)."""
        error = GitHubError(f"GitHub answered {status} to {call}", status=status)
        self._failures.setdefault(call, []).extend([error] * times)

    def thread(self, path: str, line: int, body: str) -> int:
        """A review thread the App started on `line` of `path`, as a posted review leaves it;
        its first comment's id."""
        comment = ThreadComment(id=next(self._ids), body=body, path=path)
        self.review_comments.append(comment)
        self._lines[comment.id] = line
        return comment.id

    def dislike(self, comment_id: int) -> None:
        """A person marks the comment 👎."""
        self.review_comments = [
            c.model_copy(update={"reactions": Reactions(thumbs_down=1)})
            if c.id == comment_id
            else c
            for c in self.review_comments
        ]

    def _call(self, name: str) -> None:
        self.calls.append(name)
        pending = self._failures.get(name)
        if pending:
            raise pending.pop(0)

    def _missing(self, what: str) -> GitHubError:
        return GitHubError(f"GitHub answered 404: no {what}", status=404)

    async def pull_request(self, ref: PullKey) -> PullRequest:
        self._call("pull_request")
        if self.pull is None:
            raise self._missing("pull request")
        return self.pull

    async def diff(self, ref: PullKey) -> str:
        self._call("diff")
        return self.diff_text

    async def file(self, ref: PullKey, path: str, commit: str | None) -> str | None:
        self._call("file")
        return self.files.get(FileAt(commit or "HEAD", path))

    async def texts(self, ref: PullKey, files: Iterable[FileAt]) -> dict[FileAt, str | None]:
        self._call("texts")
        return {file: self.files.get(file) for file in files}

    async def sizes(self, ref: PullKey, files: Iterable[FileAt]) -> dict[FileAt, int | None]:
        self._call("sizes")
        texts = {file: self.files.get(file) for file in files}
        return {f: None if text is None else len(text.encode()) for f, text in texts.items()}

    async def kinds(self, ref: PullKey, paths: Iterable[FileAt]) -> dict[FileAt, PathKind]:
        """From `files`: a file's path is a file, a path some file is under a directory;
        the `unanswered` ones left out."""
        self._call("kinds")

        def kind(path: FileAt) -> PathKind:
            if path in self.files:
                return PathKind.FILE
            inside = any(
                f.commit == path.commit and f.path.startswith(f"{path.path}/") for f in self.files
            )
            return PathKind.DIRECTORY if inside else PathKind.NOTHING

        return {path: kind(path) for path in paths if path not in self.unanswered}

    @asynccontextmanager
    async def tarball(self, ref: PullKey, sha: str) -> AsyncIterator[AsyncIterator[bytes]]:
        """No archive is kept in memory: GitHub's 404, as for a commit it has not got."""
        self._call("tarball")
        raise self._missing(f"archive of {sha}")
        yield _no_chunks()

    async def compare(self, ref: PullKey, base: str, head: str) -> Comparison | None:
        self._call("compare")
        return self.comparisons.get((base, head))

    async def thumbs_down(self, ref: PullKey, comment_id: int) -> list[Author]:
        self._call("thumbs_down")
        return list(self.thumbs_downs.get(comment_id, []))

    async def permission(self, ref: PullKey, login: str) -> str:
        self._call("permission")
        return self.permissions.get(login, "none")

    async def create_check_run(self, ref: PullRequestRef, check: NewCheckRun) -> int:
        self._call("create_check_run")
        check_id = next(self._ids)
        self.check_runs[check_id] = [check]
        return check_id

    async def update_check_run(
        self, ref: PullRequestRef, check_id: int, update: CheckRunUpdate
    ) -> None:
        self._call("update_check_run")
        if check_id not in self.check_runs:
            raise self._missing("check run")
        self.check_runs[check_id].append(update)

    async def check_run_status(self, ref: PullKey, check_id: int) -> str:
        self._call("check_run_status")
        if check_id not in self.check_runs:
            raise self._missing("check run")
        return next(c.status for c in reversed(self.check_runs[check_id]) if c.status)

    async def run_check_runs(self, ref: PullRequestRef, run_id: str) -> list[CheckRunState]:
        self._call("run_check_runs")
        return [
            CheckRunState(id=check_id, status=next(c.status for c in reversed(sent) if c.status))
            for check_id, sent in self.check_runs.items()
            if isinstance(sent[0], NewCheckRun) and sent[0].external_id == run_id
        ]

    async def create_review(self, ref: PullKey, review: ReviewDraft) -> int:
        self._call("create_review")
        self.reviews.append(review)
        for comment in review.comments:
            self.thread(comment.path, comment.line, comment.body)
        return next(self._ids)

    async def own_review_bodies(self, ref: PullKey) -> list[str]:
        self._call("own_review_bodies")
        return [review.body for review in self.reviews]

    async def own_review_comments(self, ref: PullKey) -> list[ThreadComment]:
        self._call("own_review_comments")
        return list(self.review_comments)

    async def own_issue_comments(self, ref: PullKey) -> list[IssueComment]:
        self._call("own_issue_comments")
        return list(self.issue_comments)

    async def resolved_threads(self, ref: PullKey) -> dict[int, ThreadResolution]:
        self._call("resolved_threads")
        return dict(self.resolved)

    async def resolve_thread(self, ref: PullKey, comment_id: int) -> bool:
        self._call("resolve_thread")
        if comment_id not in self._lines:
            return False
        self.resolved[comment_id] = ThreadResolution()
        return True

    async def unresolve_thread(self, ref: PullKey, comment_id: int) -> bool:
        self._call("unresolve_thread")
        if comment_id not in self._lines:
            return False
        self.resolved.pop(comment_id, None)
        return True

    async def review_comment_location(self, ref: PullKey, comment_id: int) -> tuple[str, int]:
        self._call("review_comment_location")
        comment = next((c for c in self.review_comments if c.id == comment_id), None)
        if comment is None:
            raise self._missing("review comment")
        root = comment.in_reply_to_id or comment.id
        return comment.path, self._lines[root]

    async def comment(self, ref: PullKey, body: str) -> int:
        self._call("comment")
        comment = IssueComment(id=next(self._ids), body=body)
        self.issue_comments.append(comment)
        return comment.id

    async def edit_comment(self, ref: PullKey, comment_id: int, body: str) -> None:
        self._call("edit_comment")
        if all(c.id != comment_id for c in self.issue_comments):
            raise self._missing("comment")
        self.issue_comments = [
            c.model_copy(update={"body": body}) if c.id == comment_id else c
            for c in self.issue_comments
        ]

    async def edit_review_comment(self, ref: PullKey, comment_id: int, body: str) -> None:
        self._call("edit_review_comment")
        if all(c.id != comment_id for c in self.review_comments):
            raise self._missing("review comment")
        self.review_comments = [
            c.model_copy(update={"body": body}) if c.id == comment_id else c
            for c in self.review_comments
        ]

    async def reply_in_thread(self, ref: PullKey, comment_id: int, body: str) -> None:
        self._call("reply_in_thread")
        root = next((c for c in self.review_comments if c.id == comment_id), None)
        if root is None or root.in_reply_to_id is not None:
            raise self._missing("review thread")
        self.review_comments.append(
            ThreadComment(id=next(self._ids), body=body, path=root.path, in_reply_to_id=root.id)
        )

    async def reply(self, ref: PullKey, comment: CommentRef, body: str) -> None:
        if comment.kind == "review":
            await self.reply_in_thread(ref, comment.thread_id, body)
        else:
            await self.comment(ref, body)

    async def react(self, ref: PullKey, comment: CommentRef, content: Reaction) -> None:
        self._call("react")
        self.reactions.append((comment, content))

    async def ensure_label(self, ref: PullKey, name: str, color: str, about: str) -> None:
        self._call("ensure_label")
        self.labels.add(name)

    async def add_label(self, ref: PullKey, name: str) -> None:
        self._call("add_label")
        if name not in self.pull_labels:
            self.pull_labels.append(name)

    async def remove_label(self, ref: PullKey, name: str) -> None:
        self._call("remove_label")
        if name in self.pull_labels:
            self.pull_labels.remove(name)


async def _no_chunks() -> AsyncIterator[bytes]:
    return
    yield b""
