"""The fake GitHub's repository archives, as GitHub serves them.

`GET /repos/{owner}/{repo}/tarball/{ref}` answers 302 with a download URL on "codeload" (here
the fake's own host, under `/_codeload`), which carries a token of its own: the download needs
no `Authorization` (a client following the redirect to GitHub's other host drops it). GitHub's
tokens expire after five minutes; the fake's do not. The download is the commit's snapshot as
`git archive` writes it: a gzipped tar in PAX format with the commit's SHA as its global
`comment`, one top directory `{owner}-{repo}-{sha7}/`, each directory before what it holds, in
git's order, files 0664 and executables 0775, symlinks as links, a submodule as an empty
directory, every member dated at the commit.

A test may have a commit served other bytes (`replace_archive`): an archive GitHub would never
make, to see what a client does with it.
"""

import gzip
import io
import re
import secrets
import tarfile
from collections.abc import Iterable
from datetime import datetime
from urllib.parse import quote, unquote

from tests.fakes.github_api.constants import DOCS, GITLINK_MODE
from tests.fakes.github_api.gitstore import _GitStore
from tests.fakes.github_api.state import _Answer, _Commit, _not_found, _Repo, _Request

CODELOAD = "/_codeload"
_DOWNLOAD = re.compile(rf"{CODELOAD}/(?P<owner>[^/]+)/(?P<repo>[^/]+)/legacy\.tar\.gz/(?P<ref>.+)")
_DOCS = f"{DOCS}/repos/contents#download-a-repository-archive-tar"

Entry = tuple[str, str, bytes]
"""A path in the tree, its git mode and its content (a symlink's target; empty for a
directory)."""


class _Archives(_GitStore):
    """The archive endpoint and its downloads."""

    def replace_archive(self, full_name: str, sha: str, data: bytes) -> None:
        """Serve `data` as the archive of commit `sha` of the repository."""
        with self._lock:
            self._replaced_archives[(full_name.lower(), sha)] = data

    def _get_tarball(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        ref = params.get("ref") or repo.default_branch
        if self._resolve(repo, ref) is None:
            raise _not_found(_DOCS)
        token = "A" + secrets.token_hex(14).upper()
        self._download_tokens[token] = (repo.full_name.lower(), ref)
        owner, name = repo.full_name.split("/")
        location = (
            f"{self.base_url}{CODELOAD}/{quote(owner)}/{quote(name)}/legacy.tar.gz/"
            f"{quote(ref, safe='/')}?token={token}"
        )
        return _Answer(302, data=b"", content_type="text/html", headers={"location": location})

    def _download(self, request: _Request) -> _Answer:
        match = _DOWNLOAD.fullmatch(request.path)
        granted = self._download_tokens.get(request.query.get("token", ""))
        if match is None or granted is None:
            return _codeload_not_found()
        full_name = f"{unquote(match['owner'])}/{unquote(match['repo'])}".lower()
        if granted != (full_name, unquote(match["ref"])):
            return _codeload_not_found()
        repo = self._repos[full_name]
        commit = self._resolve(repo, granted[1])
        if commit is None:
            return _codeload_not_found()
        owner, name = repo.full_name.split("/")
        top = f"{owner}-{name}-{commit.sha[:7]}"
        data = self._replaced_archives.get((full_name, commit.sha))
        if data is None:
            data = self._archive_of(commit, top)
        return _Answer(
            200,
            data=data,
            content_type="application/x-gzip",
            headers={"content-disposition": f"attachment; filename={top}.tar.gz"},
        )

    def _archive_of(self, commit: _Commit, top: str) -> bytes:
        key = (commit.tree, commit.sha, top)
        if key not in self._archives:
            when = int(datetime.fromisoformat(commit.committer["date"]).timestamp())
            self._archives[key] = git_archive(top, commit.sha, when, self._entries(commit.tree))
        return self._archives[key]

    def _entries(self, tree: str, prefix: str = "") -> Iterable[Entry]:
        """The tree's directories and files, each directory before what it holds."""
        for name, (mode, kind, sha) in self._trees[tree].items():
            path = f"{prefix}{name}"
            if kind == "tree":
                yield path, mode, b""
                yield from self._entries(sha, f"{path}/")
            elif kind == "commit":
                yield path, GITLINK_MODE, b""
            else:
                yield path, mode, self._blobs[sha]


def git_archive(top: str, sha: str, when: int, entries: Iterable[Entry]) -> bytes:
    """What `git archive --format=tar.gz --prefix={top}/` writes for these entries of commit
    `sha`, dated `when` (Unix time)."""
    buffer = io.BytesIO()
    with (
        # git compresses at zlib's default level, 6 (GzipFile's own default is 9).
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=when) as zipped,
        tarfile.open(
            fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT, pax_headers={"comment": sha}
        ) as tar,
    ):
        tar.addfile(_member(top, "040000", b"", when))
        for path, mode, content in entries:
            member = _member(f"{top}/{path}", mode, content, when)
            tar.addfile(member, io.BytesIO(content) if member.isreg() else None)
    return buffer.getvalue()


def _member(name: str, mode: str, content: bytes, when: int) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.mtime = when
    member.uname = member.gname = "root"
    if mode in ("040000", GITLINK_MODE):
        member.type, member.mode = tarfile.DIRTYPE, 0o775
    elif mode == "120000":
        member.type, member.mode, member.linkname = tarfile.SYMTYPE, 0o777, content.decode()
    else:
        member.mode = 0o775 if mode == "100755" else 0o664
        member.size = len(content)
    return member


def _codeload_not_found() -> _Answer:
    return _Answer(404, data=b"404: Not Found", content_type="text/plain; charset=utf-8")
