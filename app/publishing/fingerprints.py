"""Which findings are the same finding: fingerprints that survive a push and a rephrasing.

A finding's fingerprint is its path, the normalised code around its lines and the gist of its
claim (`agents.debate.claims`). Two findings are the same when their paths and code are equal and
their gists overlap by half or more: the model words a finding differently from one run to
the next, but it points at the same code for the same reason. Code is read from the RIGHT
side of the pull request's diff (the finding's lines and two either side, as far as the diff
shows them) and normalised (indentation, runs of spaces and blank lines ignored), so a
finding keeps its fingerprint when lines above it move, and loses it when the code it is
about changes.

An inline comment carries its finding's fingerprint in a hidden marker on its last line, so
what Tiebreak has posted can be read back from the pull request itself. A fix may be
suggested on another file than its finding's, its comment then sitting on the patch's lines:
that comment's marker names the finding's file too, percent-encoded so that no path can end
the hidden comment or break its line, and its thread is still the finding's. A marker naming
no file (as every marker did before) is of a finding on the file its comment is on.
"""

import hashlib
import re
from typing import Annotated, Self
from urllib.parse import quote, unquote

from pydantic import BaseModel, ConfigDict, StringConstraints

from agents.debate.claims import gist, same_gist
from agents.diff import Diff
from agents.protocol import Finding

CONTEXT_LINES = 2
"""Lines above and below a finding's own that belong to its code."""

_CODE_HASH = r"[0-9a-f]{16}"
_GIST = r"[a-z0-9_]{1,40}(?:\+[a-z0-9_]{1,40}){0,11}"
_PATH = r"[A-Za-z0-9_.~/%-]{1,12000}"
"""A file's path as `quote` writes it: no `<`, `>`, space or line break (a path of 1,000
characters of four UTF-8 bytes each at most)."""
_MARKER = re.compile(rf"<!-- tiebreak:finding:({_CODE_HASH}):({_GIST})?(?::({_PATH}))? -->")


class Fingerprint(BaseModel):
    """What makes a finding the same finding on a later run."""

    model_config = ConfigDict(frozen=True)

    path: str
    code: Annotated[str, StringConstraints(pattern=rf"^{_CODE_HASH}$")]
    """A hash of the normalised code around the finding's lines."""
    gist: tuple[Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]{1,40}$")], ...]
    """The claim's significant words, stemmed, sorted."""

    @classmethod
    def of(cls, finding: Finding, diff: Diff) -> Self:
        """The fingerprint of `finding` on the pull request whose diff is `diff`."""
        return cls(
            path=finding.path,
            code=code_hash(around(diff, finding.path, finding.start_line, finding.end_line)),
            gist=gist(finding.claim),
        )

    def same_finding(self, other: "Fingerprint") -> bool:
        """Whether `other` is this finding again: same path, same code, the same gist."""
        return (self.path, self.code) == (other.path, other.code) and same_gist(
            self.gist, other.gist
        )

    def marker(self, on: str) -> str:
        """The hidden line an inline comment on the file `on` ends with, naming the finding's
        file where that is another."""
        elsewhere = "" if on == self.path else f":{quote(self.path, safe='/')}"
        return f"<!-- tiebreak:finding:{self.code}:{'+'.join(self.gist)}{elsewhere} -->"

    @classmethod
    def from_comment(cls, path: str, body: str) -> Self | None:
        """The fingerprint a comment on `path` carries in its last line, if it has one: of a
        finding on the file its marker names, else on `path`.

        Only the last line counts: the comment's earlier lines quote model text and code.
        """
        match = _MARKER.fullmatch(body.rstrip("\n").rsplit("\n", 1)[-1])
        if match is None:
            return None
        if match[3] is not None:
            try:
                path = unquote(match[3], errors="strict")
            except UnicodeDecodeError:
                return None  # not a path Tiebreak wrote
        return cls(path=path, code=match[1], gist=tuple(match[2].split("+")) if match[2] else ())


def around(diff: Diff, path: str, start: int, end: int) -> list[str]:
    """The RIGHT-side lines start..end of `path` and `CONTEXT_LINES` either side, as far as
    the diff shows them, normalised: no blank lines, whitespace runs as one space."""
    diff_file = diff.file(path)
    if diff_file is None:
        return []
    shown = {n: text for hunk in diff_file.hunks for n, text in hunk.lines.items()}
    lines = (shown.get(n) for n in range(start - CONTEXT_LINES, end + CONTEXT_LINES + 1))
    return [normal for line in lines if line is not None and (normal := " ".join(line.split()))]


def code_hash(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
