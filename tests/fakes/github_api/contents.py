"""The fake GitHub's contents API over its git store: a file of the snapshot a ref names, as
base64 in JSON (empty above 1 MiB) or raw, or the listing of a directory.
"""

from typing import Any
from urllib.parse import quote

from tests.fakes.github_api.constants import DOCS, MAX_INLINE_CONTENT, RAW_MEDIA_TYPE
from tests.fakes.github_api.gitstore import _blob_sha, _GitStore, _wrapped_base64
from tests.fakes.github_api.state import _Answer, _error, _not_found, _Repo, _Request


class _Contents(_GitStore):
    """The contents endpoint."""

    def _get_contents(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{DOCS}/repos/contents#get-repository-content"
        ref = request.query.get("ref") or repo.default_branch
        path = params.get("path", "").strip("/")
        commit = self._resolve(repo, ref)
        if commit is None:
            if ref == repo.default_branch:
                raise _not_found(docs)  # an empty repository
            raise _error(404, f"No commit found for the ref {ref}", docs)
        tree = {
            name: self._blobs[sha]
            for name, (_, kind, sha) in self._flatten(commit.tree).items()
            if kind == "blob"
        }
        if path in tree:
            content = tree[path]
            if RAW_MEDIA_TYPE.search(request.headers.get("accept", "")):
                return _Answer(200, data=content, content_type="text/plain; charset=utf-8")
            return _Answer(200, self._content_json(repo, ref, path, content))
        prefix = f"{path}/" if path else ""
        children: dict[str, bytes | None] = {}
        for name, content in tree.items():
            if name.startswith(prefix):
                child, _, rest = name[len(prefix) :].partition("/")
                children[child] = None if rest else content
        if not children:
            raise _not_found(docs)
        return _Answer(
            200,
            [
                self._dir_entry_json(repo, ref, f"{prefix}{name}", content)
                for name, content in sorted(children.items())
            ],
        )

    def _content_json(self, repo: _Repo, ref: str, path: str, content: bytes) -> dict[str, Any]:
        answer = self._dir_entry_json(repo, ref, path, content)
        if len(content) > MAX_INLINE_CONTENT:
            answer.update(encoding="none", content="")
        else:
            answer.update(encoding="base64", content=_wrapped_base64(content))
        return answer

    def _dir_entry_json(
        self, repo: _Repo, ref: str, path: str, content: bytes | None
    ) -> dict[str, Any]:
        directory = content is None
        sha = _blob_sha(f"tree:{path}".encode() if content is None else content)
        api = f"{self.base_url}/repos/{repo.full_name}"
        url = f"{api}/contents/{quote(path)}?ref={quote(ref)}"
        git_url = f"{api}/git/{'trees' if directory else 'blobs'}/{sha}"
        html = f"https://github.com/{repo.full_name}/{'tree' if directory else 'blob'}/{ref}/{path}"
        raw = f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{path}"
        return {
            "type": "dir" if directory else "file",
            "size": 0 if content is None else len(content),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "url": url,
            "git_url": git_url,
            "html_url": html,
            "download_url": None if directory else raw,
            "_links": {"self": url, "git": git_url, "html": html},
        }
