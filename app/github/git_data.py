"""The Git Data API, for `/tiebreak apply`: a file's exact bytes and mode at a commit, and a
commit of new file contents that moves a branch forward, never back.

The contents API tells neither a file's mode nor, for text it cannot decode, its exact bytes,
so files are read through trees and blobs, one tree a directory.
"""

import base64
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from githubkit import GitHub
from githubkit.exception import RequestFailed
from pydantic import TypeAdapter, ValidationError

from app.events import Name
from app.github import answers
from app.github.answers import read
from app.github.errors import BranchMoved, GitHubError, NotWritable, translating
from app.github.models import GitFile, regular


class GitData:
    """Git Data calls on behalf of one installation (:attr:`Installation.git`)."""

    def __init__(self, github: GitHub[Any]) -> None:
        self._rest = github.rest

    @translating
    async def head_file(self, repo_full_name: str, path: str, sha: str) -> GitFile | None:
        """The regular file at `path` in commit `sha` of `repo_full_name` (for a pull request
        from a fork, the fork), or None if the commit has no regular file there.

        Read through the Git Data API, one tree a directory, because the contents API tells
        neither the file's mode nor, for text it cannot decode, its exact bytes.
        """
        owner, repo = _owner_and_name(repo_full_name)
        *folders, name = path.split("/")
        # GitHub takes a commit SHA where a tree SHA is asked for: the commit's root tree.
        tree = sha
        for folder in folders:
            entry = await self._tree_entry(owner, repo, tree, folder)
            if entry is None or entry.type != "tree":
                return None
            tree = entry.sha
        entry = await self._tree_entry(owner, repo, tree, name)
        if entry is None or entry.type != "blob" or not regular(mode := entry.mode):
            return None
        response = await self._rest.git.async_get_blob(owner, repo, entry.sha)
        blob = read(answers.Blob, response)
        return GitFile(path=path, mode=mode, content=base64.b64decode(blob.content))

    async def _tree_entry(
        self, owner: str, repo: str, tree: str, name: str
    ) -> answers.TreeEntry | None:
        response = await self._rest.git.async_get_tree(owner, repo, tree)
        entries = read(answers.Tree, response).tree
        return next((entry for entry in entries if entry.path == name), None)

    @translating
    async def commit_files(
        self,
        repo_full_name: str,
        branch: str,
        parent_sha: str,
        files: Sequence[GitFile],
        message: str,
    ) -> str:
        """Commit `files` (new contents of some paths) on top of `parent_sha` and move
        `branch` of `repo_full_name` to the commit; answer the commit's SHA.

        The commit names no author, so GitHub makes the App its author and committer. The
        branch only moves forward: if it is no longer at `parent_sha`'s line (someone pushed
        meanwhile) nothing changes and :class:`BranchMoved` is raised; a repository the App
        may not write raises :class:`NotWritable`.
        """
        owner, repo = _owner_and_name(repo_full_name)
        if not pushable(branch):
            raise GitHubError(f"cannot update a branch named {branch!r}")
        git = self._rest.git
        try:
            parent = read(answers.GitCommit, await git.async_get_commit(owner, repo, parent_sha))
            blobs = []
            for file in files:
                blob = await git.async_create_blob(
                    owner, repo, content=base64.b64encode(file.content).decode(), encoding="base64"
                )
                blobs.append(read(answers.Sha, blob).sha)
            tree = await git.async_create_tree(
                owner,
                repo,
                base_tree=parent.tree.sha,
                tree=[
                    {"path": file.path, "mode": file.mode, "type": "blob", "sha": blob}
                    for file, blob in zip(files, blobs, strict=True)
                ],
            )
            commit = await git.async_create_commit(
                owner, repo, message=message, tree=read(answers.Sha, tree).sha, parents=[parent_sha]
            )
            sha = read(answers.Sha, commit).sha
            # `/` separates a branch's own path segments; anything else (`#`, `%`) is quoted.
            await git.async_update_ref(
                owner, repo, f"heads/{quote(branch, safe='/')}", sha=sha, force=False
            )
        except RequestFailed as exc:
            status, text = exc.response.status_code, exc.response.text
            if status == 422 and "fast forward" in text:
                message = f"{repo_full_name}:{branch} moved from {parent_sha}"
                raise BranchMoved(message, status=status, body=text) from exc
            if status == 403 and "not accessible by integration" in text:
                message = f"the App may not write to {repo_full_name}"
                raise NotWritable(message, status=status, body=text) from exc
            raise
        return sha


def pushable(branch: str) -> bool:
    """Whether :meth:`GitData.commit_files` can move `branch`. githubkit 0.16 rebuilds
    each request's path from its decoded form (`AppAuth._get_api_route`), where a `#` — legal
    in a branch name — makes httpx refuse the URL before anything is sent."""
    return "#" not in branch


_NAME: TypeAdapter[str] = TypeAdapter(Name)


def _owner_and_name(full_name: str) -> tuple[str, str]:
    """`owner/name` split, each part checked as the webhook's names are: they go into paths."""
    owner, _, name = full_name.partition("/")
    try:
        return _NAME.validate_python(owner), _NAME.validate_python(name)
    except ValidationError as exc:
        raise GitHubError(f"not a repository name: {full_name!r}") from exc
