"""The fake GitHub's Git Data API over its git store: refs (an update that is not a
fast-forward refused unless forced, every update recorded), commits, trees and blobs, read
and written, a fork written only where an open pull request from it lets maintainers
modify it.
"""

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from tests.fakes.github_api.auth import _Auth
from tests.fakes.github_api.constants import (
    _GIT_DOCS,
    BLOB_MODES,
    GITLINK_MODE,
    NOT_FAST_FORWARD,
    OBJECT_MISSING,
    RAW_MEDIA_TYPE,
    REF_MISSING,
    TREE_MODE,
)
from tests.fakes.github_api.gitstore import _commit_sha, _GitStore, _wrapped_base64
from tests.fakes.github_api.records import RefUpdate
from tests.fakes.github_api.state import (
    _Answer,
    _Commit,
    _error,
    _invalid,
    _not_found,
    _now,
    _object_body,
    _Repo,
    _Request,
)


class _GitData(_Auth, _GitStore):
    """The refs, commits, trees and blobs endpoints."""

    def _get_ref(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        branch = _branch_of(params["ref"])
        if branch is None or branch not in repo.branches:
            raise _not_found(f"{_GIT_DOCS}/refs#get-a-reference")
        return _Answer(200, self._ref_json(repo, branch))

    def _update_ref(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_GIT_DOCS}/refs#update-a-reference"
        body = _object_body(request, docs)
        sha, force = body.get("sha"), body.get("force", False)
        if not isinstance(sha, str) or not sha:
            raise _invalid('"sha" wasn\'t supplied.', docs)
        if not isinstance(force, bool):
            raise _invalid(f"For 'properties/force', {json.dumps(force)} is not a boolean.", docs)
        branch = _branch_of(params["ref"])
        self._check_writable(request, repo, docs, branch or "")
        if branch is None or branch not in repo.branches:
            raise _error(422, REF_MISSING, docs)
        update = RefUpdate(f"refs/heads/{branch}", repo.branches[branch], sha, force)
        repo.ref_updates.append(update)
        if sha not in repo.commits:
            raise _error(422, OBJECT_MISSING, docs)
        if not force and not self._descends(repo, sha, repo.branches[branch]):
            raise _error(422, NOT_FAST_FORWARD, docs)
        update.accepted = True
        repo.branches[branch] = sha
        self._branch_moved(repo, branch)
        return _Answer(200, self._ref_json(repo, branch))

    def _ref_json(self, repo: _Repo, branch: str) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}/git"
        sha = repo.branches[branch]
        return {
            "ref": f"refs/heads/{branch}",
            "node_id": f"REF_{hashlib.sha1(f'{repo.full_name}:{branch}'.encode()).hexdigest()}",
            "url": f"{api}/refs/heads/{quote(branch)}",
            "object": {"type": "commit", "sha": sha, "url": f"{api}/commits/{sha}"},
        }

    def _get_commit(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        commit = repo.commits.get(params["sha"])
        if commit is None:
            raise _not_found(f"{_GIT_DOCS}/commits#get-a-commit-object")
        return _Answer(200, self._commit_json(repo, commit))

    def _create_commit(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_GIT_DOCS}/commits#create-a-commit"
        body = _object_body(request, docs)
        self._check_writable(request, repo, docs)
        message, tree, parents = body.get("message"), body.get("tree"), body.get("parents", [])
        if not isinstance(message, str):
            raise _invalid('"message" wasn\'t supplied.', docs)
        if not isinstance(tree, str):
            raise _invalid('"tree" wasn\'t supplied.', docs)
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
            raise _invalid("For 'properties/parents', it is not an array of strings.", docs)
        if tree not in self._trees:
            raise _error(422, "Tree SHA does not exist", docs)
        if any(parent not in repo.commits for parent in parents):
            raise _error(422, "Parent SHA does not exist or is not a commit object", docs)
        bot = f"{self.app_slug}[bot]"
        default = {
            "name": bot,
            "email": f"{self._user_id(bot)}+{bot}@users.noreply.github.com",
            "date": _now(),
        }
        author = _person(body.get("author"), default, "author", docs)
        committer = _person(body.get("committer"), author, "committer", docs)
        sha = _commit_sha(tree, parents, author, committer, message)
        commit = repo.commits.setdefault(
            sha, _Commit(sha, tree, list(parents), message, author, committer)
        )
        return _Answer(201, self._commit_json(repo, commit))

    def _commit_json(self, repo: _Repo, commit: _Commit) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}/git"
        html = f"https://github.com/{repo.full_name}/commit"
        return {
            "sha": commit.sha,
            "node_id": f"C_{commit.sha}",
            "url": f"{api}/commits/{commit.sha}",
            "html_url": f"{html}/{commit.sha}",
            "author": dict(commit.author),
            "committer": dict(commit.committer),
            "message": commit.message,
            "tree": {"sha": commit.tree, "url": f"{api}/trees/{commit.tree}"},
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{html}/{p}"}
                for p in commit.parents
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        }

    def _get_tree(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        # A tree SHA, or (as GitHub takes) a commit SHA or a branch for the commit's tree.
        sha = params["sha"]
        if sha not in self._trees:
            commit = self._resolve(repo, sha)
            if commit is None:
                raise _not_found(f"{_GIT_DOCS}/trees#get-a-tree")
            sha = commit.tree
        # GitHub recurses for any value of `recursive`, "0" and "false" included.
        recursive = "recursive" in request.query
        return _Answer(200, self._tree_json(repo, sha, recursive=recursive))

    def _create_tree(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_GIT_DOCS}/trees#create-a-tree"
        body = _object_body(request, docs)
        self._check_writable(request, repo, docs)
        items, base = body.get("tree"), body.get("base_tree")
        if not isinstance(items, list):
            raise _invalid('"tree" wasn\'t supplied.', docs)
        if base is not None and (not isinstance(base, str) or base not in self._trees):
            raise _error(422, f"base_tree {base} is not a valid tree", docs)
        files = self._flatten(base) if base else {}
        for item in items:
            self._apply_tree_item(files, item, docs)
        return _Answer(201, self._tree_json(repo, self._write_tree(files), recursive=False))

    def _apply_tree_item(
        self, files: dict[str, tuple[str, str, str]], item: Any, docs: str
    ) -> None:
        if not isinstance(item, dict):
            raise _invalid("For 'items', it is not an object.", docs)
        path, mode, kind = item.get("path"), item.get("mode"), item.get("type")
        if not isinstance(path, str) or not _valid_path(path):
            raise _error(422, f"tree.path {json.dumps(path)} is not a valid path", docs)
        modes = {"blob": BLOB_MODES, "tree": (TREE_MODE,), "commit": (GITLINK_MODE,)}
        if kind not in modes:
            raise _invalid(
                f"For 'properties/type', {json.dumps(kind)} is not one of "
                '["blob", "tree", "commit"].',
                docs,
            )
        if mode not in modes[kind]:
            raise _error(422, f"tree.mode {json.dumps(mode)} is not valid for a {kind}", docs)
        has_sha, content = "sha" in item, item.get("content")
        if has_sha == (content is not None):
            raise _error(422, "Must supply exactly one of tree.sha or tree.content", docs)
        under = f"{path}/"
        present = [p for p in files if p == path or p.startswith(under)]
        if content is not None:
            if kind != "blob" or not isinstance(content, str):
                raise _error(422, "tree.content is only for a blob, as a string", docs)
            added = {path: (mode, "blob", self._store_blob(content.encode()))}
        elif item["sha"] is None:
            if not present:
                raise _error(422, f"tree.path {path} does not exist in base_tree", docs)
            added = {}
        elif kind == "tree":
            if item["sha"] not in self._trees:
                raise _error(422, f"tree.sha {item['sha']} is not a valid tree", docs)
            added = {f"{under}{p}": e for p, e in self._flatten(item["sha"]).items()}
        else:
            if kind == "blob" and item["sha"] not in self._blobs:
                raise _error(422, f"tree.sha {item['sha']} is not a valid blob", docs)
            added = {path: (mode, kind, str(item["sha"]))}
        for old in present:
            del files[old]
        # A file where a directory of the new path was (or the other way round) goes.
        parts = path.split("/")
        for depth in range(1, len(parts)):
            files.pop("/".join(parts[:depth]), None)
        files.update(added)

    def _tree_json(self, repo: _Repo, sha: str, *, recursive: bool) -> dict[str, Any]:
        return {
            "sha": sha,
            "url": f"{self.base_url}/repos/{repo.full_name}/git/trees/{sha}",
            "tree": self._tree_items(repo, sha, recursive, ""),
            "truncated": False,
        }

    def _tree_items(
        self, repo: _Repo, sha: str, recursive: bool, prefix: str
    ) -> list[dict[str, Any]]:
        api = f"{self.base_url}/repos/{repo.full_name}/git"
        items: list[dict[str, Any]] = []
        for name, (mode, kind, child) in self._trees[sha].items():
            item: dict[str, Any] = {"path": f"{prefix}{name}", "mode": mode, "type": kind}
            item["sha"] = child
            if kind == "blob":
                item["size"] = len(self._blobs[child])
            if kind != "commit":
                item["url"] = f"{api}/{kind}s/{child}"
            items.append(item)
            if kind == "tree" and recursive:
                items += self._tree_items(repo, child, recursive, f"{prefix}{name}/")
        return items

    def _get_blob(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        content = self._blobs.get(params["sha"])
        if content is None:
            raise _not_found(f"{_GIT_DOCS}/blobs#get-a-blob")
        if RAW_MEDIA_TYPE.search(request.headers.get("accept", "")):
            return _Answer(200, data=content, content_type="application/octet-stream")
        sha = params["sha"]
        return _Answer(
            200,
            {
                "sha": sha,
                "node_id": f"B_{sha}",
                "size": len(content),
                "url": f"{self.base_url}/repos/{repo.full_name}/git/blobs/{sha}",
                "content": _wrapped_base64(content),
                "encoding": "base64",
            },
        )

    def _create_blob(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_GIT_DOCS}/blobs#create-a-blob"
        body = _object_body(request, docs)
        self._check_writable(request, repo, docs)
        content, encoding = body.get("content"), body.get("encoding", "utf-8")
        if not isinstance(content, str):
            raise _invalid('"content" wasn\'t supplied.', docs)
        if encoding in ("utf-8", "utf8"):
            data = content.encode()
        elif encoding == "base64":
            try:
                data = base64.b64decode(content)
            except (binascii.Error, ValueError) as exc:
                raise _error(422, "content is not valid Base64", docs) from exc
        else:
            raise _error(
                422,
                f"encoding must be either 'utf-8' or 'base64', not {json.dumps(encoding)}",
                docs,
            )
        sha = self._store_blob(data)
        url = f"{self.base_url}/repos/{repo.full_name}/git/blobs/{sha}"
        return _Answer(201, {"sha": sha, "url": url})


def _person(raw: Any, default: Mapping[str, str], key: str, docs: str) -> dict[str, str]:
    """A commit's author or committer from a request: name, email, an optional date."""
    if raw is None:
        return dict(default)
    if not isinstance(raw, dict):
        raise _invalid(f"For 'properties/{key}', it is not an object.", docs)
    person = {**default, **{k: raw[k] for k in ("name", "email", "date") if k in raw}}
    if not all(isinstance(person[k], str) for k in ("name", "email", "date")):
        raise _invalid(f"For 'properties/{key}', name, email and date must be strings.", docs)
    try:
        when = datetime.fromisoformat(person["date"])
    except ValueError as exc:
        raise _invalid(f"For 'properties/{key}/date', it is not an ISO 8601 time.", docs) from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    person["date"] = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return person


def _valid_path(path: str) -> bool:
    parts = path.split("/")
    return all(part not in ("", ".", "..", ".git") for part in parts)


def _branch_of(ref: str) -> str | None:
    """The branch of a `heads/<branch>` ref (the form the refs endpoints take)."""
    branch = ref.removeprefix("heads/")
    return branch if branch != ref and branch else None
