"""The GitHub side of a review, through githubkit: one App client per process.

The App authenticates with its JWT; each job asks for an installation client by the
installation id it carries (never a token). Every client of the App, its installations'
included, sends through one transport (:class:`app.github.pool.ConnectionPool`), whose
connections a worker keeps open from its start to its shutdown. Every client has an explicit
timeout, and retries rate limits and server errors by :class:`app.github.retry.CappedRetry`: a
review never sleeps for an hour on a rate-limit reset. Every failed request is counted in the
process's metrics (:class:`app.github.retry.CountedFailures`). A call that fails raises
:class:`app.github.errors.GitHubError`, never one of githubkit's exceptions.
"""

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar
from urllib.parse import quote

from githubkit import AppAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.exception import RequestFailed

from app.bodies import CheckRunUpdate, NewCheckRun, ReviewDraft
from app.events import CommentRef, PullKey, PullRequestRef
from app.github import answers, archives, signing, warming
from app.github.actions import Actions
from app.github.answers import Answered, read
from app.github.blobs import file_text, read_kinds, read_sizes, read_texts
from app.github.errors import translating
from app.github.file_diffs import file_section
from app.github.git_data import GitData
from app.github.identity import AppIdentity, Authorship
from app.github.models import (
    Author,
    CheckRunState,
    Comparison,
    FileAt,
    IssueComment,
    PathKind,
    PullRequest,
    Reacted,
    Reaction,
    ThreadComment,
    ThreadResolution,
)
from app.github.pool import ConnectionPool
from app.github.retry import CappedRetry, CountedFailures
from app.github.review_threads import resolve_thread, review_threads
from app.github.tokens import InstallationAuth, InstallationTokens
from app.telemetry.metrics import Metrics

CHECK_RUN_NAME = "Tiebreak"
TIMEOUT_SECONDS = 30.0
MAX_FILE_PAGES = 30
"""The files API lists at most 3,000 files: 30 pages of 100."""
MAX_PAGES = 30
"""Pages of 100 read of any REST list (comments, reviews): 3,000 items."""
COMPARE_FILES = 300
"""The most files GitHub lists when comparing two commits."""

DIFF_MEDIA_TYPE = "application/vnd.github.diff"

Posted = TypeVar("Posted", answers.PullRequestReview, IssueComment, ThreadComment)
"""Something posted on a pull request, whose author says whether it is Tiebreak's."""


class GitHubApp:
    """The App's client, built once per process."""

    def __init__(
        self,
        app_id: int,
        private_key: str,
        base_url: str,
        *,
        timeout: float = TIMEOUT_SECONDS,
        retry: bool = True,
        retry_backoff: float = 1.0,
        metrics: Metrics | None = None,
    ) -> None:
        signing.read_keys_once()
        self._app_id = app_id
        self._auth = AppAuthStrategy(app_id, private_key)
        self.retry_backoff = retry_backoff
        self.metrics = Metrics() if metrics is None else metrics
        """Where failed requests are counted: the worker's own, which it flushes."""
        decide = CappedRetry(backoff=retry_backoff) if retry else None
        self._pool = ConnectionPool()
        self._github = GitHub(
            self._auth,
            base_url=base_url.rstrip("/") + "/",
            timeout=timeout,
            auto_retry=CountedFailures(self.metrics, decide),
            http_cache=False,
            # The App's JWT is cached per App client, not in githubkit's module-wide default.
            cache_strategy=MemCacheStrategy(),
            async_transport=self._pool,
        )
        self.identity = AppIdentity(self._github)
        """The App's bot user, the author of everything it posts: looked up once."""
        self.tokens = InstallationTokens(self._github)
        """Its installations' access tokens, each asked for once at a time (and retried,
        and counted, as the App's calls are)."""

    def installation(self, installation_id: int) -> "Installation":
        client = self._github.with_auth(InstallationAuth(self.tokens, installation_id))
        return Installation(
            client, self.identity, retry_backoff=self.retry_backoff, app_id=self._app_id
        )

    def keep_alive(self) -> None:
        """Keep connections to GitHub open between calls (on the running event loop), until
        :meth:`aclose`: a worker's calls, from its start to its shutdown."""
        self._pool.open()

    async def aclose(self) -> None:
        """Close the connections kept open; later calls close theirs once answered."""
        await self._pool.close()

    async def warm_up(self) -> None:
        """Do once what a process's first review would: open a connection to GitHub, sign
        the App's JWT, learn the App's login (:attr:`identity`), and import the modules
        githubkit imports on first use (:mod:`app.github.warming`)."""
        await self.identity.bot_login()
        warming.import_models(self._github.rest)


class Installation:
    """Calls on behalf of one installation.

    What it reads back of Tiebreak's own posts (reviews, comments) is only what `identity`
    says Tiebreak wrote: the App's bot user's (a marker anyone else writes is not Tiebreak's),
    or nothing, for a person's calls (:mod:`app.github.personal`).
    """

    def __init__(
        self,
        github: GitHub[Any],
        identity: Authorship,
        *,
        retry_backoff: float = 1.0,
        app_id: int | None = None,
    ) -> None:
        self._github = github
        self._rest = github.rest
        self._identity = identity
        self._app_id = app_id
        """The App whose check runs are Tiebreak's; None for a person's calls, who has none."""
        self.git = GitData(github)
        """The Git Data API, for committing fixes."""
        self.actions = Actions(github, identity)
        """GitHub Actions, for findings' tests run in the repository's CI."""
        self.retry_backoff = retry_backoff
        """Scales the waits of retries the caller makes itself (see `CappedRetry`)."""

    @translating
    async def pull_request(self, ref: PullKey) -> PullRequest:
        response = await self._rest.pulls.async_get(ref.owner, ref.repo, ref.number)
        return read(answers.Pull, response).pull_request()

    @translating
    async def diff(self, ref: PullKey) -> str:
        """The pull request's unified diff; above GitHub's diff limits (406), rebuilt from
        the paginated files API."""
        try:
            response = await self._rest.pulls.async_get(
                ref.owner, ref.repo, ref.number, headers={"Accept": DIFF_MEDIA_TYPE}
            )
        except RequestFailed as exc:
            if exc.response.status_code != 406:
                raise
            return await self._diff_from_files(ref)
        return response.text

    async def _diff_from_files(self, ref: PullKey) -> str:
        parts = []
        for page in range(1, MAX_FILE_PAGES + 1):
            response = await self._rest.pulls.async_list_files(
                ref.owner, ref.repo, ref.number, per_page=100, page=page
            )
            files = read(list[answers.ChangedFile], response)
            parts += [file_section(f) for f in files]
            if len(files) < 100:
                break
        return "".join(parts)

    @translating
    async def file(self, ref: PullKey, path: str, commit: str | None) -> str | None:
        """A file's text at a commit (None: the default branch's head), or None if it does
        not exist there."""
        return await file_text(self._github, ref, path, commit)

    async def texts(self, ref: PullKey, files: Iterable[FileAt]) -> dict[FileAt, str | None]:
        """Many files' texts, each at its commit, in one GraphQL request per hundred files;
        None for a file missing, binary or too large. Never fails: a failed request is read
        file by file instead, and a file GitHub cannot give is None (:mod:`app.github.blobs`)."""
        return await read_texts(self._github, ref, files)

    async def sizes(self, ref: PullKey, files: Iterable[FileAt]) -> dict[FileAt, int | None]:
        """Many files' sizes in bytes, each at its commit, without their texts; None for a
        file missing or binary. Never fails: a file whose size GitHub did not give is left
        out (:mod:`app.github.blobs`)."""
        return await read_sizes(self._github, ref, files)

    async def kinds(self, ref: PullKey, paths: Iterable[FileAt]) -> dict[FileAt, PathKind]:
        """What each path is at its commit (a file or a symlink, a directory or a submodule,
        nothing), in one GraphQL request per hundred paths. Never fails: a path GitHub did not
        answer for is left out (:mod:`app.github.blobs`)."""
        return await read_kinds(self._github, ref, paths)

    def tarball(self, ref: PullKey, sha: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """The repository's snapshot at commit `sha`, a gzipped tar, as its chunks arrive
        (:mod:`app.github.archives`)."""
        return archives.tarball(self._github, ref, sha)

    @translating
    async def create_check_run(self, ref: PullRequestRef, check: NewCheckRun) -> int:
        """Tiebreak's check run on the pull request's head; its id."""
        response = await self._rest.checks.async_create(
            ref.owner,
            ref.repo,
            name=CHECK_RUN_NAME,
            head_sha=ref.head_sha,
            **check.model_dump(mode="json", exclude_none=True),
        )
        return read(answers.Created, response).id

    @translating
    async def update_check_run(
        self, ref: PullRequestRef, check_id: int, update: CheckRunUpdate
    ) -> None:
        await self._rest.checks.async_update(
            ref.owner, ref.repo, check_id, **update.model_dump(mode="json", exclude_none=True)
        )

    @translating
    async def check_run_status(self, ref: PullKey, check_id: int) -> str:
        """`queued`, `in_progress` or `completed`."""
        response = await self._rest.checks.async_get(ref.owner, ref.repo, check_id)
        return read(answers.CheckRun, response).status

    @translating
    async def run_check_runs(self, ref: PullRequestRef, run_id: str) -> list[CheckRunState]:
        """Tiebreak's check runs on the pull request's head whose `external_id` is `run_id`:
        every one that run created, whether or not it learnt its id, oldest first."""
        if self._app_id is None:
            return []
        found: list[CheckRunState] = []
        for page in range(1, MAX_PAGES + 1):
            response = await self._rest.checks.async_list_for_ref(
                ref.owner,
                ref.repo,
                ref.head_sha,
                check_name=CHECK_RUN_NAME,
                filter_="all",  # not only the latest of the name: every one a run created
                app_id=self._app_id,
                per_page=100,
                page=page,
            )
            batch = read(answers.CheckRuns, response).check_runs
            found += [
                CheckRunState(id=run.id, status=run.status)
                for run in batch
                if run.external_id == run_id
            ]
            if len(batch) < 100:
                break
        return sorted(found, key=lambda run: run.id)

    @translating
    async def create_review(self, ref: PullKey, review: ReviewDraft) -> int:
        response = await self._rest.pulls.async_create_review(
            ref.owner, ref.repo, ref.number, **review.model_dump(mode="json", exclude_none=True)
        )
        return read(answers.Created, response).id

    @translating
    async def own_review_bodies(self, ref: PullKey) -> list[str]:
        """The body of every review the App posted on the pull request, oldest first."""
        list_page = self._rest.pulls.async_list_reviews
        reviews = await self._all_pages(list_page, ref, list[answers.PullRequestReview])
        return [review.body for review in await self._own(reviews)]

    @translating
    async def compare(self, ref: PullKey, base: str, head: str) -> Comparison | None:
        """How commit `head` relates to `base`, and the files changed between them; None
        when GitHub has not got both (a force-push can drop a commit)."""
        try:
            response = await self._rest.repos.async_compare_commits(
                ref.owner, ref.repo, f"{base}...{head}"
            )
        except RequestFailed as exc:
            if exc.response.status_code == 404:
                return None
            raise
        answer = read(answers.CommitComparison, response)
        files = answer.files or []
        paths = {f.filename for f in files} | {
            f.previous_filename for f in files if f.previous_filename
        }
        return Comparison(
            status=answer.status, paths=frozenset(paths), complete=len(files) < COMPARE_FILES
        )

    @translating
    async def own_review_comments(self, ref: PullKey) -> list[ThreadComment]:
        """The App's review comments on the pull request (of its reviews, and its replies),
        oldest first."""
        list_page = self._rest.pulls.async_list_review_comments
        return await self._own(await self._all_pages(list_page, ref, list[ThreadComment]))

    @translating
    async def own_issue_comments(self, ref: PullKey) -> list[IssueComment]:
        """The App's comments in the pull request's conversation, oldest first."""
        list_page = self._rest.issues.async_list_comments
        return await self._own(await self._all_pages(list_page, ref, list[IssueComment]))

    async def _own(self, items: list[Posted]) -> list[Posted]:
        return [item for item in items if await self._identity.authored(item.user)]

    @translating
    async def resolved_threads(self, ref: PullKey) -> dict[int, ThreadResolution]:
        """The resolved review threads, by the id of their first comment, each with who
        resolved it (GitHub tells this through GraphQL only)."""
        return {
            thread.first_comment: ThreadResolution(
                resolver=thread.resolver or "",
                by_app=thread.resolver is not None and await self._identity.named(thread.resolver),
            )
            async for thread in review_threads(self._github, ref)
            if thread.resolved
        }

    @translating
    async def resolve_thread(self, ref: PullKey, comment_id: int) -> bool:
        """Resolve the review thread whose first comment is `comment_id`; False if the pull
        request has no such thread."""
        return await resolve_thread(self._github, ref, comment_id)

    @translating
    async def unresolve_thread(self, ref: PullKey, comment_id: int) -> bool:
        """Unresolve the review thread whose first comment is `comment_id`; False if the pull
        request has no such thread."""
        return await resolve_thread(self._github, ref, comment_id, resolved=False)

    @translating
    async def edit_comment(self, ref: PullKey, comment_id: int, body: str) -> None:
        """Replace the body of a conversation comment (the App's own)."""
        await self._rest.issues.async_update_comment(ref.owner, ref.repo, comment_id, body=body)

    @translating
    async def edit_review_comment(self, ref: PullKey, comment_id: int, body: str) -> None:
        """Replace the body of a review comment (the App's own reply in a thread)."""
        await self._rest.pulls.async_update_review_comment(
            ref.owner, ref.repo, comment_id, body=body
        )

    @translating
    async def reply_in_thread(self, ref: PullKey, comment_id: int, body: str) -> None:
        """A reply in the review thread whose first comment is `comment_id`."""
        await self._rest.pulls.async_create_reply_for_review_comment(
            ref.owner, ref.repo, ref.number, comment_id, body=body
        )

    async def _all_pages(
        self,
        list_page: Callable[..., Awaitable[Answered]],
        ref: PullKey,
        shape: type[list[Posted]],
    ) -> list[Posted]:
        items: list[Posted] = []
        for page in range(1, MAX_PAGES + 1):
            response = await list_page(ref.owner, ref.repo, ref.number, per_page=100, page=page)
            batch = read(shape, response)
            items += batch
            if len(batch) < 100:
                break
        return items

    @translating
    async def ensure_label(self, ref: PullKey, name: str, color: str, about: str) -> None:
        """Create the label in the repository unless it exists (422 `already_exists`)."""
        try:
            await self._rest.issues.async_create_label(
                ref.owner, ref.repo, name=name, color=color, description=about
            )
        except RequestFailed as exc:
            if exc.response.status_code != 422:
                raise

    @translating
    async def add_label(self, ref: PullKey, name: str) -> None:
        await self._rest.issues.async_add_labels(ref.owner, ref.repo, ref.number, labels=[name])

    @translating
    async def remove_label(self, ref: PullKey, name: str) -> None:
        """Take the label off; a label that is not there (404) is fine."""
        try:
            await self._rest.issues.async_remove_label(
                ref.owner, ref.repo, ref.number, quote(name, safe="")
            )
        except RequestFailed as exc:
            if exc.response.status_code != 404:
                raise

    @translating
    async def permission(self, ref: PullKey, login: str) -> str:
        """`admin`, `write`, `read` or `none` (maintain counts as write, triage as read)."""
        try:
            response = await self._rest.repos.async_get_collaborator_permission_level(
                ref.owner, ref.repo, login
            )
        except RequestFailed as exc:
            if exc.response.status_code == 404:
                return "none"
            raise
        return read(answers.Permission, response).permission or "none"

    @translating
    async def thumbs_down(self, ref: PullKey, comment_id: int) -> list[Author]:
        """Who reacted 👎 to the review comment `comment_id`: the first hundred, oldest first
        (the first person who may steer Tiebreak among them is all a review needs)."""
        response = await self._rest.reactions.async_list_for_pull_request_review_comment(
            ref.owner, ref.repo, comment_id, content="-1", per_page=100
        )
        return [r.user for r in read(list[Reacted], response) if r.user is not None]

    @translating
    async def react(self, ref: PullKey, comment: CommentRef, content: Reaction) -> None:
        if comment.kind == "review":
            await self._rest.reactions.async_create_for_pull_request_review_comment(
                ref.owner, ref.repo, comment.id, content=content
            )
        else:
            await self._rest.reactions.async_create_for_issue_comment(
                ref.owner, ref.repo, comment.id, content=content
            )

    @translating
    async def reply(self, ref: PullKey, comment: CommentRef, body: str) -> None:
        """Answer a comment where it was made: in its review thread, or on the conversation."""
        if comment.kind == "review":
            await self._rest.pulls.async_create_reply_for_review_comment(
                ref.owner, ref.repo, ref.number, comment.thread_id, body=body
            )
        else:
            await self.comment(ref, body)

    @translating
    async def review_comment_location(self, ref: PullKey, comment_id: int) -> tuple[str, int]:
        """The path and (new-file) line a review comment sits on."""
        response = await self._rest.pulls.async_get_review_comment(ref.owner, ref.repo, comment_id)
        location = read(answers.CommentLocation, response)
        return location.path, location.line or location.original_line or 0

    @translating
    async def comment(self, ref: PullKey, body: str) -> int:
        """A comment on the pull request's conversation; its id."""
        response = await self._rest.issues.async_create_comment(
            ref.owner, ref.repo, ref.number, body=body
        )
        return read(answers.Created, response).id
