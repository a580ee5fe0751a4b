"""The fake GitHub's comparison of two commits (`GET /compare/BASE...HEAD`): the status and
the commits ahead and behind from the commit graph, the newest commits oldest first, and
the files the head changed since the merge base, with patches computed from the snapshots.
"""

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from tests.fakes.github_api.base import _user
from tests.fakes.github_api.constants import _COMMITS_DOCS, MAX_COMPARED_COMMITS, MAX_COMPARED_FILES
from tests.fakes.github_api.diffs import _patch
from tests.fakes.github_api.git_data import _GitData
from tests.fakes.github_api.pulls import _PullRequests
from tests.fakes.github_api.state import _Answer, _Commit, _error, _not_found, _Repo, _Request


class _Compare(_PullRequests, _GitData):
    """The compare endpoint (its files are entries as a pull request lists them)."""

    def _compare(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_COMMITS_DOCS}#compare-two-commits"
        basehead = params["basehead"]
        base_ref, dots, head_ref = basehead.partition("...")
        if not dots:
            # GitHub takes two dots too, and still compares from the merge base.
            base_ref, dots, head_ref = basehead.partition("..")
        base = self._resolve(repo, base_ref) if dots else None
        head = self._resolve(repo, head_ref) if dots else None
        if base is None or head is None:
            raise _not_found(docs)
        merge_base = self._merge_base(repo, base.sha, head.sha)
        if merge_base is None:
            raise _error(404, f"No common ancestor between {base_ref} and {head_ref}.", docs)
        theirs = set(self._ancestors(repo, base.sha))
        ours = set(self._ancestors(repo, head.sha))
        ahead = self._oldest_first(repo, head.sha, ours - theirs)
        behind_by = len(theirs - ours)
        if not ahead and not behind_by:
            status = "identical"
        elif not behind_by:
            status = "ahead"
        elif not ahead:
            status = "behind"
        else:
            status = "diverged"
        owner = repo.full_name.split("/", 1)[0]
        html = f"https://github.com/{repo.full_name}/compare"
        return _Answer(
            200,
            {
                "url": f"{self.base_url}/repos/{repo.full_name}/compare/{quote(basehead)}",
                "html_url": f"{html}/{quote(basehead)}",
                "permalink_url": f"{html}/{owner}:{base.sha}...{owner}:{head.sha}",
                "diff_url": f"{html}/{quote(basehead)}.diff",
                "patch_url": f"{html}/{quote(basehead)}.patch",
                "base_commit": self._listed_commit_json(repo, base),
                "merge_base_commit": self._listed_commit_json(repo, repo.commits[merge_base]),
                "status": status,
                "ahead_by": len(ahead),
                "behind_by": behind_by,
                "total_commits": len(ahead),
                "commits": [
                    self._listed_commit_json(repo, repo.commits[sha])
                    for sha in ahead[-MAX_COMPARED_COMMITS:]
                ],
                # Three dots: what the head changed since the merge base, not since the base.
                "files": self._compared_files(repo, repo.commits[merge_base], head),
            },
        )

    def _listed_commit_json(self, repo: _Repo, commit: _Commit) -> dict[str, Any]:
        """A commit as the commits API lists it (GitHub's `commit` schema, without stats and
        files)."""
        api = f"{self.base_url}/repos/{repo.full_name}"
        html = f"https://github.com/{repo.full_name}/commit"
        git = self._commit_json(repo, commit)
        return {
            "url": f"{api}/commits/{commit.sha}",
            "sha": commit.sha,
            "node_id": git["node_id"],
            "html_url": git["html_url"],
            "comments_url": f"{api}/commits/{commit.sha}/comments",
            "commit": {
                "url": git["url"],
                "author": git["author"],
                "committer": git["committer"],
                "message": git["message"],
                "comment_count": 0,
                "tree": git["tree"],
                "verification": git["verification"],
            },
            "author": self._account(commit.author),
            "committer": self._account(commit.committer),
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{html}/{p}"}
                for p in commit.parents
            ],
        }

    def _account(self, person: Mapping[str, str]) -> dict[str, Any] | None:
        """The GitHub user of a commit's author or committer, known here only by a noreply
        address (`login@…` or `id+login@users.noreply.github.com`); None for another one."""
        local, _, domain = person["email"].partition("@")
        if domain != "users.noreply.github.com":
            return None
        login = local.partition("+")[2] or local
        kind = "Bot" if login.endswith("[bot]") else "User"
        return _user(login, kind, self._user_id(login))

    def _compared_files(self, repo: _Repo, before: _Commit, after: _Commit) -> list[dict[str, Any]]:
        """The `files` of a comparison: what differs between two snapshots, by path."""
        old, new = self._flatten(before.tree), self._flatten(after.tree)
        contents = f"{self.base_url}/repos/{repo.full_name}/contents"
        entries: list[dict[str, Any]] = []
        for path in sorted(old.keys() | new.keys()):
            was, now = old.get(path), new.get(path)
            if was == now:
                continue
            if was is None:
                status, sha = "added", new[path][2]
            elif now is None:
                status, sha = "removed", was[2]
            else:
                # "changed": the same content with another mode.
                status, sha = ("changed" if was[2] == now[2] else "modified"), now[2]
            raw: dict[str, Any] = {"filename": path, "status": status, "sha": sha}
            patch = _patch(self._file_content(was), self._file_content(now))
            if patch is not None:
                raw["patch"] = patch
            entry = self._entry(repo, after.sha, raw)
            entry["contents_url"] = f"{contents}/{quote(path)}?ref={after.sha}"
            entries.append(entry)
        return entries[:MAX_COMPARED_FILES]

    def _file_content(self, entry: tuple[str, str, str] | None) -> bytes:
        if entry is None:
            return b""
        _, kind, sha = entry
        # A submodule's text in a diff, as git prints it.
        return f"Subproject commit {sha}\n".encode() if kind == "commit" else self._blobs[sha]
