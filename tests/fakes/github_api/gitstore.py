"""The fake GitHub's git store: blobs and trees content-addressed with git's own SHA-1 (shared
by every repository, as a fork network shares them), commits with a tree and parents, and
branches naming commits; how setup places a pull request's base and head in it, the walks
of the commit graph that compare and ref updates need, and the pure functions computing
git's SHAs.
"""

import base64
import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime

from tests.fakes.github_api.base import _Base
from tests.fakes.github_api.constants import _SHA_LIKE, EMPTY_TREE, FILE_MODE, SETUP_DATE, TREE_MODE
from tests.fakes.github_api.state import _Commit, _Repo


class _GitStore(_Base):
    """The git store's objects, refs and commit graph."""

    def _store_blob(self, content: bytes) -> str:
        sha = _blob_sha(content)
        self._blobs.setdefault(sha, content)
        return sha

    def _write_tree(self, files: Mapping[str, tuple[str, str, str]]) -> str:
        """Store the trees of a path → (mode, type, SHA) mapping; answer the root's SHA."""
        entries: dict[str, tuple[str, str, str]] = {}
        directories: dict[str, dict[str, tuple[str, str, str]]] = {}
        for path, entry in files.items():
            name, slash, rest = path.partition("/")
            if slash:
                directories.setdefault(name, {})[rest] = entry
            else:
                entries[name] = entry
        for name, inside in directories.items():
            entries[name] = (TREE_MODE, "tree", self._write_tree(inside))
        # Git sorts a tree's entries by name, a directory's as if it ended in "/".
        ordered = dict(sorted(entries.items(), key=lambda e: _tree_key(e[0], e[1][1])))
        sha = _tree_sha(ordered)
        self._trees.setdefault(sha, ordered)
        return sha

    def _flatten(self, tree: str, prefix: str = "") -> dict[str, tuple[str, str, str]]:
        """Path → (mode, type, SHA) of every file (blob or submodule) under the tree."""
        files: dict[str, tuple[str, str, str]] = {}
        for name, (mode, kind, sha) in self._trees[tree].items():
            if kind == "tree":
                files.update(self._flatten(sha, f"{prefix}{name}/"))
            else:
                files[f"{prefix}{name}"] = (mode, kind, sha)
        return files

    def _tree_of(self, texts: Mapping[str, str | bytes]) -> str:
        return self._write_tree(
            {
                path.strip("/"): (
                    FILE_MODE,
                    "blob",
                    self._store_blob(text.encode() if isinstance(text, str) else text),
                )
                for path, text in texts.items()
            }
        )

    def _overlay(self, tree: str, on_top: str) -> str:
        files = self._flatten(tree)
        files.update(self._flatten(on_top))
        return self._write_tree(files)

    def _resolve(self, repo: _Repo, ref: str) -> _Commit | None:
        """The commit a ref names: a branch (`main`, `heads/main`, `refs/heads/main`) or a SHA."""
        branch = ref.removeprefix("refs/").removeprefix("heads/")
        if branch in repo.branches:
            return repo.commits[repo.branches[branch]]
        return repo.commits.get(ref)

    def _setup_commit(
        self, repo: _Repo, sha: str, parents: list[str], tree: str, author: str
    ) -> _Commit:
        """The repository's commit `sha`, made with this tree and parents if it lacks it."""
        commit = repo.commits.get(sha)
        if commit is None:
            person = {"name": author, "email": f"{author}@users.noreply.github.com"}
            person["date"] = SETUP_DATE
            commit = _Commit(sha, tree, parents, "Set up by a test", person, dict(person))
            repo.commits[sha] = commit
        return commit

    def _setup_ref(self, repo: _Repo, ref: str) -> _Commit:
        commit = self._resolve(repo, ref)
        if commit is not None:
            return commit
        branch = ref.removeprefix("refs/").removeprefix("heads/")
        if branch != repo.default_branch and _SHA_LIKE.fullmatch(ref):
            return self._setup_commit(repo, ref, [], EMPTY_TREE, "octocat")
        # A branch no pull request named yet: a stand-in commit holds its files until one does.
        sha = hashlib.sha1(f"{repo.full_name}\0{branch}".encode()).hexdigest()
        commit = self._setup_commit(repo, sha, [], EMPTY_TREE, "octocat")
        commit.placeholder = True
        repo.branches[branch] = sha
        return commit

    def _place_base(
        self,
        repo: _Repo,
        branch: str,
        sha: str,
        files: Mapping[str, str | bytes] | None,
        author: str,
    ) -> None:
        commit = self._setup_commit(repo, sha, [], EMPTY_TREE, author)
        current = repo.commits.get(repo.branches.get(branch, ""))
        # A base branch stays where it is (the base moves only by the repository's pushes),
        # unless only a stand-in commit of set_file held it.
        if current is None or (current.placeholder and current is not commit):
            if current is not None:
                commit.tree = self._overlay(commit.tree, current.tree)
            repo.branches[branch] = sha
        if files is not None:
            commit.tree = self._tree_of(files)

    def _place_head(
        self,
        repo: _Repo,
        fork: _Repo,
        branch: str,
        sha: str,
        parent: str,
        files: Mapping[str, str | bytes] | None,
        author: str,
    ) -> None:
        commit = repo.commits.get(sha) or fork.commits.get(sha)
        if commit is None:
            before = repo.commits[parent]
            commit = self._setup_commit(repo, sha, [parent], before.tree, author)
        current = fork.commits.get(fork.branches.get(branch, ""))
        if current is not None and current.placeholder and current is not commit:
            commit.tree = self._overlay(commit.tree, current.tree)
        if files is not None:
            commit.tree = self._tree_of(files)
        # The base repository keeps a pull request's head (GitHub's refs/pull/N/head); the
        # branch is the head repository's.
        repo.commits[sha] = commit
        self._share(repo, fork, sha)
        fork.branches[branch] = sha

    def _share(self, source: _Repo, target: _Repo, sha: str) -> None:
        """Give `target` the commit and its ancestors `source` has (the same objects)."""
        pending = [sha]
        while pending:
            current = pending.pop()
            commit = source.commits.get(current)
            if commit is None or target.commits.get(current) is commit:
                continue
            target.commits.setdefault(current, commit)
            pending += commit.parents

    def _descends(self, repo: _Repo, sha: str, ancestor: str) -> bool:
        """Whether `ancestor` is `sha` or one of its ancestors."""
        seen: set[str] = set()
        pending = [sha]
        while pending:
            current = pending.pop()
            if current == ancestor:
                return True
            commit = repo.commits.get(current)
            if commit is None or current in seen:
                continue
            seen.add(current)
            pending += commit.parents
        return False

    def _ancestors(self, repo: _Repo, sha: str) -> list[str]:
        """`sha` and the commits it descends from that the repository has, nearest first."""
        order: list[str] = []
        seen = {sha}
        pending = [sha]
        while pending:
            current = pending.pop(0)
            commit = repo.commits.get(current)
            if commit is None:
                continue
            order.append(current)
            for parent in commit.parents:
                if parent not in seen:
                    seen.add(parent)
                    pending.append(parent)
        return order

    def _merge_base(self, repo: _Repo, one: str, other: str) -> str | None:
        """A best common ancestor of two commits (one no other common ancestor descends
        from), the nearest to `other` if there are several; None for unrelated histories."""
        common = set(self._ancestors(repo, one)) & set(self._ancestors(repo, other))
        below = {
            older
            for sha in common
            for parent in repo.commits[sha].parents
            for older in self._ancestors(repo, parent)
        }
        return next((sha for sha in self._ancestors(repo, other) if sha in common - below), None)

    def _oldest_first(self, repo: _Repo, sha: str, among: set[str]) -> list[str]:
        """The commits of `among` that `sha` is or descends from, parents before children
        (GitHub's chronological order)."""
        order: list[str] = []
        visited: set[str] = set()
        pending: list[tuple[str, bool]] = [(sha, False)]
        while pending:
            current, expanded = pending.pop()
            if expanded:
                order.append(current)
                continue
            if current in visited or current not in among:
                continue
            visited.add(current)
            pending.append((current, True))
            # Reversed, so that the first parent's history comes first.
            pending += [(parent, False) for parent in reversed(repo.commits[current].parents)]
        return order

    def _branch_moved(self, repo: _Repo, branch: str) -> None:
        """Move the open pull requests whose head is this branch, as a push does."""
        sha = repo.branches[branch]
        for (base, _), pull in self._pulls.items():
            if pull.head_repo is None or pull.head_repo.lower() != repo.full_name.lower():
                continue
            if pull.head_ref != branch or pull.state != "open" or pull.head_sha == sha:
                continue
            self._share(repo, self._repos[base], sha)
            pull.head_sha = sha
            pull.heads.append(sha)


def _blob_sha(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _wrapped_base64(content: bytes) -> str:
    # GitHub wraps base64 at 60 characters, each line ending in a newline.
    encoded = base64.b64encode(content).decode()
    return "".join(f"{encoded[i : i + 60]}\n" for i in range(0, len(encoded), 60))


def _raw_sha(sha: str) -> bytes:
    # A SHA a test made up ("h1") still needs 20 bytes in a tree object.
    try:
        raw = bytes.fromhex(sha)
    except ValueError:
        raw = b""
    return raw if len(raw) == 20 else hashlib.sha1(sha.encode()).digest()


def _tree_key(name: str, kind: str) -> bytes:
    return f"{name}/".encode() if kind == "tree" else name.encode()


def _tree_sha(entries: Mapping[str, tuple[str, str, str]]) -> str:
    """Git's SHA of a tree object with these (already ordered) entries."""
    data = b"".join(
        f"{mode.lstrip('0')} {name}".encode() + b"\0" + _raw_sha(sha)
        for name, (mode, _, sha) in entries.items()
    )
    return hashlib.sha1(b"tree %d\0" % len(data) + data).hexdigest()


def _commit_sha(
    tree: str,
    parents: Sequence[str],
    author: Mapping[str, str],
    committer: Mapping[str, str],
    message: str,
) -> str:
    """Git's SHA of a commit object (unsigned)."""

    def signature(person: Mapping[str, str]) -> str:
        seconds = int(datetime.fromisoformat(person["date"]).timestamp())
        return f"{person['name']} <{person['email']}> {seconds} +0000"

    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines += [f"author {signature(author)}", f"committer {signature(committer)}"]
    data = ("\n".join(lines) + "\n\n" + message).encode()
    return hashlib.sha1(b"commit %d\0" % len(data) + data).hexdigest()
