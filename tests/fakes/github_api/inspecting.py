"""How tests inspect the fake GitHub: copies of what it holds (check runs, reviews, labels,
review and issue comments, reactions, branches and commits with their files, ref updates),
the requests it received, a file's diff lines as it places review comments on them, and
whether a review thread is resolved.
"""

import copy
import re

from tests.fakes.github_api.comments import _Comments
from tests.fakes.github_api.diffs import _diff_lines
from tests.fakes.github_api.gitstore import _GitStore
from tests.fakes.github_api.records import (
    CheckRun,
    Commit,
    DiffLine,
    IssueComment,
    Label,
    Recorded,
    RefUpdate,
    Review,
    ReviewComment,
)


class _Inspecting(_Comments, _GitStore):
    """`FakeGitHub`'s inspection methods."""

    def requests_to(self, method: str, path_regex: str) -> list[Recorded]:
        """The recorded requests whose method and path (fully) match, in order."""
        pattern = re.compile(path_regex)
        with self._lock:
            return [
                r for r in self.requests if r.method == method.upper() and pattern.fullmatch(r.path)
            ]

    def check_runs(self, full_name: str) -> list[CheckRun]:
        """Copies of the repository's check runs, oldest first."""
        with self._lock:
            return copy.deepcopy(list(self._existing_repo(full_name).check_runs.values()))

    def reviews(self, full_name: str, number: int) -> list[Review]:
        """Copies of the reviews the pull request received, oldest first."""
        with self._lock:
            return copy.deepcopy(self._existing_pull(full_name, number).reviews)

    def labels(self, full_name: str) -> list[Label]:
        """Copies of the repository's labels."""
        with self._lock:
            return copy.deepcopy(list(self._existing_repo(full_name).labels.values()))

    def issue_labels(self, full_name: str, number: int) -> list[str]:
        """The names of the labels on the issue or pull request, in the order added."""
        with self._lock:
            repo = self._existing_repo(full_name)
            pull = self._existing_pull(full_name, number)
            return [repo.labels[key].name for key in pull.labels]

    def diff_lines(self, full_name: str, number: int, path: str) -> list[DiffLine]:
        """The lines of one file's patch as the fake places review comments on them."""
        with self._lock:
            pull = self._existing_pull(full_name, number)
            entry = next((f for f in pull.files if f["filename"] == path), None)
            if entry is None:
                raise KeyError(f"{path} is not in the diff of {full_name}#{number}")
            return _diff_lines(entry.get("patch", ""))

    def review_comments(self, full_name: str, number: int) -> list[ReviewComment]:
        """Copies of every review comment on the pull request (of reviews, of people,
        replies), oldest first."""
        with self._lock:
            return copy.deepcopy(self._existing_pull(full_name, number).comments)

    def issue_comments(self, full_name: str, number: int) -> list[IssueComment]:
        """Copies of the comments in the pull request's conversation, oldest first."""
        with self._lock:
            repo = self._existing_repo(full_name)
            pull = self._existing_pull(full_name, number)
            comments = [c for c in repo.issue_comments.values() if c.number == pull.number]
            return copy.deepcopy(comments)

    def reactions(self, full_name: str, comment_id: int) -> list[str]:
        """The contents of the reactions to an issue or review comment, in the order made."""
        with self._lock:
            repo = self._existing_repo(full_name)
            return [r.content for r in repo.reactions.get(comment_id, [])]

    def thread_resolved(self, full_name: str, number: int, comment_id: int) -> bool:
        """Whether the review thread of `comment_id` (its first comment or a reply) is
        resolved."""
        with self._lock:
            pull = self._existing_pull(full_name, number)
            return self._existing_root(pull, full_name, comment_id) in pull.resolved

    def branch_sha(self, full_name: str, branch: str) -> str:
        """The commit the branch points at."""
        with self._lock:
            repo = self._existing_repo(full_name)
            if branch not in repo.branches:
                raise KeyError(f"{full_name} has no branch {branch}")
            return repo.branches[branch]

    def branch_files(self, full_name: str, branch: str) -> dict[str, str]:
        """The files of the branch's commit: path → text."""
        with self._lock:
            return self.commit(full_name, self.branch_sha(full_name, branch)).files

    def commit(self, full_name: str, sha: str) -> Commit:
        """A commit of the repository, with its files."""
        with self._lock:
            repo = self._existing_repo(full_name)
            found = repo.commits.get(sha)
            if found is None:
                raise KeyError(f"{full_name} has no commit {sha}")
            files = {
                path: self._blobs[blob].decode(errors="replace")
                for path, (_, kind, blob) in self._flatten(found.tree).items()
                if kind == "blob"
            }
            return Commit(
                sha=found.sha,
                tree=found.tree,
                parents=tuple(found.parents),
                message=found.message,
                author=dict(found.author),
                committer=dict(found.committer),
                files=files,
            )

    def tree_entries(self, sha: str) -> dict[str, tuple[str, str, str]]:
        """A tree of the store: each entry's name → (mode, type, SHA), in git's order."""
        with self._lock:
            return dict(self._trees[sha])

    def blob(self, sha: str) -> bytes:
        """A blob of the store."""
        with self._lock:
            return self._blobs[sha]

    def ref_updates(self, full_name: str) -> list[RefUpdate]:
        """Copies of the ref updates the repository was asked for, refused ones included."""
        with self._lock:
            return copy.deepcopy(self._existing_repo(full_name).ref_updates)
