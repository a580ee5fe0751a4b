"""How tests set the fake GitHub up: repositories, installations, files, pull requests and
their pushes, reviews and comments by people or other Apps, reactions, resolved threads,
permissions and labels, the App manifest flow, tokens issued or revoked, and the faults it
answers instead of the request.
"""

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tests.fakes.app_manifests import RegisteredApp
from tests.fakes.github_api.auth import _Auth
from tests.fakes.github_api.comments import _Comments
from tests.fakes.github_api.constants import (
    AUTO_LABEL_COLOR,
    BLOB_MODES,
    FILE_MODE,
    REACTIONS,
    REVIEW_STATES,
    ROLE_PERMISSIONS,
)
from tests.fakes.github_api.diffs import (
    _diff_from_entries,
    _diff_hunk,
    _diff_lines,
    _entries_from_diff,
    _find_line,
)
from tests.fakes.github_api.gitstore import _GitStore
from tests.fakes.github_api.pulls import _PullRequests
from tests.fakes.github_api.records import IssueComment, Label, Review, ReviewComment
from tests.fakes.github_api.state import _error_body, _Fault, _now, _Pull


class _Setup(_PullRequests, _Comments, _Auth, _GitStore):
    """`FakeGitHub`'s setup methods."""

    def add_repo(self, full_name: str, *, default_branch: str = "main") -> None:
        """Add a repository (or change its default branch). Other setup methods add a
        repository they name on first use, with default branch `main`."""
        with self._lock:
            self._repo_for_setup(full_name).default_branch = default_branch

    def delete_repo(self, full_name: str) -> None:
        """Delete a repository, as its owner does a fork: it is gone from the API and from
        every installation. The open pull requests whose head it held keep their head commit
        (the base repository keeps it under `refs/pull/N/head`), but GitHub no longer names
        their head repository: `head.repo` is null."""
        with self._lock:
            key = self._existing_repo(full_name).full_name.lower()
            del self._repos[key]
            for names in self._installations.values():
                names.discard(key)
            for pull in self._pulls.values():
                if pull.head_repo is not None and pull.head_repo.lower() == key:
                    pull.head_repo = None

    def add_installation(self, installation_id: int, *, repos: Iterable[str]) -> None:
        """Install the App on these repositories (replacing an installation with this id)."""
        with self._lock:
            names = {self._repo_for_setup(name).full_name.lower() for name in repos}
            self._installations[installation_id] = names

    def set_file(
        self, full_name: str, ref: str, path: str, text: str | bytes, *, mode: str = FILE_MODE
    ) -> None:
        """Put a file at `path` in the commit `ref` names: a branch or a commit SHA; with
        `mode` `120000`, a symlink whose target is `text`.

        The commit's snapshot is edited in place (its SHA stays), so a file set on a pull
        request's head branch is seen through its head SHA and the other way round. A ref the
        repository lacks is a new commit if it looks like a SHA (7 to 40 hex digits), else a
        new branch, whose files the first pull request naming that branch takes over.
        """
        if mode not in BLOB_MODES:
            raise ValueError(f"a file's mode is one of {BLOB_MODES}, not {mode!r}")
        with self._lock:
            repo = self._repo_for_setup(full_name)
            commit = self._setup_ref(repo, ref)
            content = text.encode() if isinstance(text, str) else text
            files = self._flatten(commit.tree)
            files[path.strip("/")] = (mode, "blob", self._store_blob(content))
            commit.tree = self._write_tree(files)

    def add_pull(
        self,
        full_name: str,
        number: int,
        *,
        head_sha: str,
        base_sha: str,
        diff: str = "",
        files: Sequence[Mapping[str, Any]] | None = None,
        base_ref: str = "main",
        head_ref: str | None = None,
        head_repo: str | None = None,
        draft: bool = False,
        title: str = "A pull request",
        body: str | None = None,
        author: str = "octocat",
        author_type: str = "User",
        state: str = "open",
        maintainer_can_modify: bool = True,
        too_large: bool = False,
        base_files: Mapping[str, str | bytes] | None = None,
        head_files: Mapping[str, str | bytes] | None = None,
        parent: str | None = None,
    ) -> None:
        """Open a pull request, or move an existing one to a new head (a push).

        Its files come from `diff` (a unified diff, as `git diff` prints it) unless `files`
        lists them explicitly (dicts as `GET /pulls/{n}/files` answers them; `filename`
        required, `patch` optional); with `files` and no `diff`, the diff is built from the
        files' patches. `too_large` makes the diff media type answer 406, as GitHub does for
        a diff above 300 files or 20,000 lines (which also answers 406 by itself).
        Re-adding a number keeps its reviews, comments and labels and remembers the earlier
        heads.

        `base_files` and `head_files` are the whole snapshots (path → content) of the base and
        head commits; the fake does not check them against the diff, keep them consistent.
        Without them a new head has its parent's files (the base's, or on a push the previous
        head's). The head branch `head_ref` points at `head_sha` in `head_repo`: for a fork,
        the fork (added as a repository of the fake) holds the branch, and the base
        repository only knows the head commit (as GitHub keeps it under `refs/pull/N/head`).

        `parent` names the new head's parent instead: a commit the repository has, such as
        the base for a force-push of a rebased branch, so that the previous head is no
        longer an ancestor of the new one (compare answers `diverged`). The previous head
        stays in the store, as GitHub keeps it. A head the store already has keeps its
        parents.
        """
        with self._lock:
            repo = self._repo_for_setup(full_name)
            fork = self._repo_for_setup(head_repo) if head_repo else repo
            head_ref = head_ref or f"pull-{number}"
            key = (repo.full_name.lower(), number)
            old = self._pulls.get(key)
            self._place_base(repo, base_ref, base_sha, base_files, author)
            if parent is None:
                parent = old.head_sha if old else base_sha
            elif parent not in repo.commits:
                raise KeyError(f"{full_name} has no commit {parent}")
            self._place_head(repo, fork, head_ref, head_sha, parent, head_files, author)
            if files is None:
                entries = [self._entry(repo, head_sha, e) for e in _entries_from_diff(diff)]
            else:
                entries = [self._entry(repo, head_sha, dict(f)) for f in files]
                diff = diff or _diff_from_entries(entries)
            self._pulls[key] = _Pull(
                number=number,
                id=old.id if old else next(self._ids),
                head_sha=head_sha,
                head_ref=head_ref,
                head_repo=fork.full_name,
                base_sha=base_sha,
                base_ref=base_ref,
                draft=draft,
                title=title,
                body=body,
                author=author,
                author_type=author_type,
                state=state,
                maintainer_can_modify=maintainer_can_modify,
                diff=diff,
                files=entries,
                too_large=too_large,
                heads=[*(old.heads if old else []), head_sha],
                labels=old.labels if old else [],
                reviews=old.reviews if old else [],
                comments=old.comments if old else [],
                resolved=old.resolved if old else {},
            )

    def add_issue_comment(
        self,
        full_name: str,
        number: int,
        body: str,
        *,
        author: str = "octocat",
        author_type: str = "User",
    ) -> int:
        """A comment someone wrote in the pull request's conversation; answers its id."""
        with self._lock:
            repo = self._existing_repo(full_name)
            pull = self._existing_pull(full_name, number)
            now = _now()
            comment = IssueComment(
                next(self._ids), pull.number, body, author, author_type, now, now
            )
            repo.issue_comments[comment.id] = comment
            return comment.id

    def add_review(
        self,
        full_name: str,
        number: int,
        body: str,
        *,
        author: str = "octocat",
        author_type: str = "User",
        event: str = "COMMENT",
    ) -> int:
        """A review someone wrote on the pull request's head, without inline comments;
        answers its id. `author_type` is `Bot` for another App (`github-actions[bot]`)."""
        if event not in REVIEW_STATES:
            raise ValueError(f"{event!r} is not one of {list(REVIEW_STATES)}")
        with self._lock:
            pull = self._existing_pull(full_name, number)
            review = Review(
                id=next(self._ids),
                number=pull.number,
                body=body,
                event=event,
                state=REVIEW_STATES[event],
                commit_id=pull.head_sha,
                comments=[],
                submitted_at=_now(),
                author=author,
                author_type=author_type,
            )
            pull.reviews.append(review)
            return review.id

    def add_review_comment(
        self,
        full_name: str,
        number: int,
        path: str,
        line: int,
        body: str,
        *,
        author: str = "octocat",
        author_type: str = "User",
        side: str = "RIGHT",
        in_reply_to: int | None = None,
    ) -> int:
        """A review comment someone wrote on a line of the diff; answers its id.

        With `in_reply_to` it is a reply in that comment's thread (given a reply, in the
        thread the reply is in), and `path` and `line` must be the thread's. A place that is
        not a line of the diff raises ValueError: GitHub would not have taken it either.
        """
        with self._lock:
            pull = self._existing_pull(full_name, number)
            if in_reply_to is not None:
                root = self._thread_root(pull, in_reply_to)
                if root is None:
                    raise KeyError(f"no review comment {in_reply_to} on {full_name}#{number}")
                if (root.path, root.line) != (path, line):
                    raise ValueError(
                        f"comment {root.id} is on {root.path}:{root.line}, not {path}:{line}"
                    )
                reply = self._reply(pull, root, body, author, author_type)
                return reply.id
            entry = next((f for f in pull.files if f["filename"] == path), None)
            placed = _find_line(_diff_lines(entry.get("patch", "")), side, line) if entry else None
            if entry is None or placed is None:
                raise ValueError(f"{path}:{line} ({side}) is not a line of {full_name}#{number}")
            comment = ReviewComment(
                id=next(self._ids),
                path=path,
                body=body,
                line=line,
                side=side,
                start_line=None,
                start_side=None,
                position=None,
                author=author,
                author_type=author_type,
                review_id=next(self._ids),
                commit_id=pull.head_sha,
                diff_hunk=_diff_hunk(entry.get("patch", ""), placed.position),
                created_at=_now(),
            )
            pull.comments.append(comment)
            return comment.id

    def add_reaction(
        self,
        full_name: str,
        comment_id: int,
        content: str,
        *,
        user: str = "octocat",
        user_type: str = "User",
    ) -> int:
        """A reaction someone made to an issue or review comment; answers its id.

        `content` is one of GitHub's eight (ValueError otherwise). The same reaction by the
        same user again is the one already made, as on GitHub.
        """
        if content not in REACTIONS:
            raise ValueError(f"{content!r} is not one of {list(REACTIONS)}")
        with self._lock:
            repo = self._existing_repo(full_name)
            review_comment = self._find_review_comment(repo, comment_id)
            if comment_id not in repo.issue_comments and review_comment is None:
                raise KeyError(f"no comment {comment_id} in {full_name}")
            reaction, _ = self._add_reaction(repo, comment_id, content, user, user_type)
            return reaction.id

    def resolve_thread(self, full_name: str, number: int, comment_id: int, *, by: str) -> None:
        """The user `by` resolved the review thread of `comment_id` (or of the thread the reply
        `comment_id` is in), as GitHub lets anyone with write access, and the pull request's
        author, do: GraphQL's `resolvedBy` names them from then on."""
        with self._lock:
            pull = self._existing_pull(full_name, number)
            pull.resolved[self._existing_root(pull, full_name, comment_id)] = by

    def unresolve_thread(self, full_name: str, number: int, comment_id: int) -> None:
        """Someone unresolved the review thread of `comment_id` (or of its reply)."""
        with self._lock:
            pull = self._existing_pull(full_name, number)
            pull.resolved.pop(self._existing_root(pull, full_name, comment_id), None)

    def set_permission(self, full_name: str, login: str, role_name: str) -> None:
        """Give `login` a role on the repository: admin, maintain, write, triage, read, none."""
        if role_name not in ROLE_PERMISSIONS:
            raise ValueError(f"{role_name!r} is not one of {list(ROLE_PERMISSIONS)}")
        with self._lock:
            repo = self._repo_for_setup(full_name)
            repo.permissions[login.lower()] = (login, role_name)

    def label_pull(self, full_name: str, number: int, name: str) -> None:
        """Put the label `name` on a pull request, creating it in the repository if new."""
        with self._lock:
            repo = self._repo_for_setup(full_name)
            pull = self._pulls[(repo.full_name.lower(), number)]
            if name.lower() not in repo.labels:
                repo.labels[name.lower()] = Label(next(self._ids), name, AUTO_LABEL_COLOR, None)
            pull.labels.append(name.lower())

    def add_label(
        self,
        full_name: str,
        name: str,
        *,
        color: str = AUTO_LABEL_COLOR,
        description: str | None = None,
    ) -> None:
        """A label the repository already has."""
        with self._lock:
            repo = self._repo_for_setup(full_name)
            repo.labels[name.lower()] = Label(next(self._ids), name, color, description)

    def allow_registration(self, private_pem: str, *, webhook_secret: str | None = None) -> None:
        """Let the manifest flow register this fake's App (see :mod:`tests.fakes.app_manifests`):
        the conversion answers its id, `private_pem` (the key whose public half the fake
        checks) and `webhook_secret` (a random one by default)."""
        with self._lock:
            self._manifests.private_pem = private_pem
            if webhook_secret is not None:
                self._manifests.webhook_secret = webhook_secret

    def expire_manifest_codes(self) -> None:
        """Age every manifest flow code past GitHub's hour."""
        with self._lock:
            self._manifests.expire()

    def registered_apps(self) -> list[RegisteredApp]:
        """Copies of the Apps the manifest flow registered, with their manifests."""
        with self._lock:
            return copy.deepcopy(self._manifests.registered)

    @property
    def registration_webhook_secret(self) -> str:
        return self._manifests.webhook_secret

    def issue_token(self, installation_id: int, *, repos: Iterable[str] | None = None) -> str:
        """An installation token without the JWT exchange (for a raw client or a subprocess)."""
        with self._lock:
            if installation_id not in self._installations:
                raise KeyError(f"installation {installation_id} is not set up")
            narrowed = None if repos is None else frozenset(r.lower() for r in repos)
            return self._new_token(installation_id, narrowed)

    def issue_person_token(self, login: str, *, repos: Iterable[str]) -> str:
        """A person's token (`ghp_…`) that reaches `repos`: what it posts is written by
        `login`, a `User`."""
        with self._lock:
            names = [self._repo_for_setup(name).full_name.lower() for name in repos]
            return self._new_person_token(login, frozenset(names))

    def revoke_tokens(self) -> None:
        """Make every token issued so far invalid (401), as when tokens expire early."""
        with self._lock:
            self._tokens.clear()

    def fail_every(self, every: int, methods: Iterable[str], path_regex: str, status: int) -> None:
        """From now on, answer every `every`-th request whose method is one of `methods` and
        whose path matches with `status` (in GitHub's shape), unprocessed, as a flaky gateway
        would."""
        body = _error_body(status)
        with self._lock:
            self._faults.append(
                _Fault(
                    "",
                    re.compile(path_regex),
                    status,
                    body,
                    {},
                    remaining=0,
                    processed=False,
                    every=every,
                    methods=frozenset(m.upper() for m in methods),
                )
            )

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        times: int = 1,
        *,
        processed: bool = False,
        accept: str | None = None,
    ) -> None:
        """Answer the next `times` requests whose method and path (without the query, as
        sent) match, and whose Accept header is `accept` if given (a pull request's diff, not
        the pull request), with this error instead, before authentication or validation.

        `body` defaults to GitHub's shape for the status. With `processed`, the request
        first takes effect as usual and only the answer is replaced: a write that succeeded
        although the client saw it fail. For a secondary rate limit give 403 (or 429) with
        `{"retry-after": "<seconds>"}`.
        """
        with self._lock:
            if body is None:
                body = _error_body(status)
            self._faults.append(
                _Fault(
                    method.upper(),
                    re.compile(path_regex),
                    status,
                    body,
                    dict(headers or {}),
                    times,
                    processed,
                    accept=accept,
                )
            )
