"""The fake GitHub's pull requests: `GET /pulls/{n}` as JSON or as a diff (406 above GitHub's
limits for one), and `GET /pulls/{n}/files`, whose entries setup and compare fill in the
same way.
"""

import hashlib
from typing import Any
from urllib.parse import quote

from tests.fakes.github_api.base import _user
from tests.fakes.github_api.constants import (
    DIFF_MEDIA_TYPES,
    DOCS,
    MAX_DIFF_FILES,
    MAX_DIFF_LINES,
    MAX_LISTED_FILES,
)
from tests.fakes.github_api.diffs import _diff_lines
from tests.fakes.github_api.labels import _Labels
from tests.fakes.github_api.state import _Answer, _error, _Pull, _Repo, _Request


class _PullRequests(_Labels):
    """The pull requests endpoints (a pull request's JSON lists its labels)."""

    def _get_pull(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        accept = request.headers.get("accept", "")
        if any(media in accept for media in DIFF_MEDIA_TYPES):
            return self._diff_answer(pull)
        return _Answer(200, self._pull_json(repo, pull))

    def _diff_answer(self, pull: _Pull) -> _Answer:
        docs = f"{DOCS}/pulls/pulls#list-pull-requests-files"
        lines = pull.diff.count("\n")
        if pull.too_large or len(pull.files) > MAX_DIFF_FILES:
            reason = f"the maximum number of files ({MAX_DIFF_FILES})"
        elif lines > MAX_DIFF_LINES:
            reason = f"the maximum number of lines ({MAX_DIFF_LINES})"
        else:
            return _Answer(200, data=pull.diff.encode(), content_type="text/plain; charset=utf-8")
        raise _error(
            406,
            f"Sorry, the diff exceeded {reason}. Consider using 'List pull requests files' "
            "API or locally cloning the repository instead.",
            docs,
            [{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
        )

    def _pull_json(self, repo: _Repo, pull: _Pull) -> dict[str, Any]:
        base = self.base_url
        url = f"{base}/repos/{repo.full_name}/pulls/{pull.number}"
        html = f"https://github.com/{repo.full_name}/pull/{pull.number}"
        author = _user(pull.author, pull.author_type, self._user_id(pull.author))
        return {
            "url": url,
            "id": pull.id,
            "node_id": f"PR_{pull.id}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": f"{base}/repos/{repo.full_name}/issues/{pull.number}",
            "number": pull.number,
            "state": pull.state,
            "locked": False,
            "title": pull.title,
            "user": author,
            "body": pull.body,
            "labels": [self._label_json(repo, repo.labels[key]) for key in pull.labels],
            "draft": pull.draft,
            "head": self._head_json(repo, pull),
            "base": {
                "label": f"{repo.full_name.split('/', 1)[0]}:{pull.base_ref}",
                "ref": pull.base_ref,
                "sha": pull.base_sha,
                "user": self._repo_json(repo.full_name)["owner"],
                "repo": self._repo_json(repo.full_name),
            },
            "author_association": "CONTRIBUTOR",
            "merged": False,
            "mergeable": None,
            "maintainer_can_modify": pull.maintainer_can_modify,
            "commits": len(pull.heads),
            "additions": sum(f["additions"] for f in pull.files),
            "deletions": sum(f["deletions"] for f in pull.files),
            "changed_files": len(pull.files),
            "comments": sum(1 for c in repo.issue_comments.values() if c.number == pull.number),
            "review_comments": len(pull.comments),
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "closed_at": None,
            "merged_at": None,
        }

    def _head_json(self, repo: _Repo, pull: _Pull) -> dict[str, Any]:
        """The head branch; its repository null once deleted (a fork), as GitHub answers."""
        head: dict[str, Any] = {"ref": pull.head_ref, "sha": pull.head_sha}
        if pull.head_repo is None:
            return {**head, "label": f"unknown:{pull.head_ref}", "user": None, "repo": None}
        owner = pull.head_repo.split("/", 1)[0]
        return {
            **head,
            "label": f"{owner}:{pull.head_ref}",
            "user": _user(owner, "User", self._user_id(owner)),
            "repo": self._repo_json(pull.head_repo, fork=pull.head_repo != repo.full_name),
        }

    def _list_files(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        # contents_url is built here: the port is unknown when a test adds the pull request.
        contents = f"{self.base_url}/repos/{repo.full_name}/contents"
        files = [
            {**f, "contents_url": f"{contents}/{quote(f['filename'])}?ref={pull.head_sha}"}
            for f in pull.files[:MAX_LISTED_FILES]
        ]
        return self._page(request, files)

    def _entry(self, repo: _Repo, head_sha: str, raw: dict[str, Any]) -> dict[str, Any]:
        """A `GET /pulls/{n}/files` item with the fields GitHub always sends filled in."""
        filename = raw.get("filename")
        if not isinstance(filename, str) or not filename:
            raise ValueError(f"a pull request file needs a filename: {raw!r}")
        status = raw.get("status", "modified")
        allowed = ("added", "removed", "modified", "renamed", "copied", "changed", "unchanged")
        if status not in allowed:
            raise ValueError(f"{filename}: status {status!r} is not one of {allowed}")
        patch = raw.get("patch")
        counted = _diff_lines(patch) if isinstance(patch, str) else []
        additions = raw.get("additions")
        if additions is None:
            additions = sum(1 for d in counted if d.left is None and d.right is not None)
        deletions = raw.get("deletions")
        if deletions is None:
            deletions = sum(1 for d in counted if d.right is None and d.left is not None)
        quoted = quote(filename)
        entry: dict[str, Any] = {
            "sha": raw.get("sha") or hashlib.sha1(f"{head_sha}:{filename}".encode()).hexdigest(),
            "filename": filename,
            "status": status,
            "additions": additions,
            "deletions": deletions,
            "changes": raw.get("changes", additions + deletions),
            "blob_url": f"https://github.com/{repo.full_name}/blob/{head_sha}/{quoted}",
            "raw_url": f"https://github.com/{repo.full_name}/raw/{head_sha}/{quoted}",
        }
        if isinstance(patch, str):
            entry["patch"] = patch
        if raw.get("previous_filename"):
            entry["previous_filename"] = raw["previous_filename"]
        return entry
