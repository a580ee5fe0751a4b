"""Which findings are the same finding: fingerprints that survive a push and a rephrasing.

A finding's fingerprint is its path, the normalised code around its lines and the gist of its
claim. Two findings are the same when their paths and code are equal and their gists overlap
by half or more: the model words a finding differently from one run to the next, but it
points at the same code for the same reason. Code is read from the RIGHT side of the pull
request's diff (the finding's lines and two either side, as far as the diff shows them) and
normalised (indentation, runs of spaces and blank lines ignored), so a finding keeps its
fingerprint when lines above it move, and loses it when the code it is about changes.

An inline comment carries its finding's fingerprint in a hidden marker on its last line, so
what Tiebreak has posted can be read back from the pull request itself.
"""

import hashlib
import re
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, StringConstraints

from agents.diff import Diff
from agents.protocol import Finding

CONTEXT_LINES = 2
"""Lines above and below a finding's own that belong to its code."""

GIST_WORDS = 12
"""At most this many words of a claim make its gist (the longest, then in order)."""

SAME_GIST = 0.5
"""Two gists are the same finding's when this share of the smaller one is in both."""

_WORD = re.compile(r"[a-z0-9_]+")
_CODE_HASH = r"[0-9a-f]{16}"
_GIST = r"[a-z0-9_]{1,40}(?:\+[a-z0-9_]{1,40}){0,11}"
_MARKER = re.compile(rf"<!-- tiebreak:finding:({_CODE_HASH}):({_GIST})? -->")
_SUFFIXES = ("ing", "ed", "es", "s", "e")

_STOP_WORDS = """
    a about above after again all also an and any are as at be because been before being
    below between both but by can could did do does doing down during each either else
    every few for from further had has have having here how if in into is it its itself
    just may might more most must never no nor not now of off on once only or other our out
    over own same shall should since so some such than that the their them then there these
    they this those through to too under until up upon very was we were what when where
    whether which while who why will with within without would yet you your
    line lines code call calls value values function method here case cases
"""
_STOP = frozenset(_STOP_WORDS.split())
"""Words that say nothing about which problem a claim is about."""


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

    def marker(self) -> str:
        """The hidden line an inline comment ends with."""
        return f"<!-- tiebreak:finding:{self.code}:{'+'.join(self.gist)} -->"

    @classmethod
    def from_comment(cls, path: str, body: str) -> Self | None:
        """The fingerprint a comment on `path` carries in its last line, if it has one.

        Only the last line counts: the comment's earlier lines quote model text and code.
        """
        match = _MARKER.fullmatch(body.rstrip("\n").rsplit("\n", 1)[-1])
        if match is None:
            return None
        return cls(path=path, code=match[1], gist=tuple(match[2].split("+")) if match[2] else ())


def gist(claim: str) -> tuple[str, ...]:
    """The words of `claim` that say what is wrong: lower-cased, stop words out, stemmed."""
    words = {_stem(w) for w in _WORD.findall(claim.lower()) if w not in _STOP and len(w) > 2}
    kept = sorted(words, key=lambda w: (-len(w), w))[:GIST_WORDS]
    return tuple(sorted(w[:40] for w in kept))


def same_gist(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two gists are one claim's: half the smaller one is shared (empty gists, from
    claims of only stop words, are the same as each other and nothing else)."""
    if not a or not b:
        return not a and not b
    shared = len(set(a) & set(b))
    return shared >= SAME_GIST * min(len(set(a)), len(set(b)))


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


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
