"""The SZZ method, without I/O: which commits fix bugs, which lines they fixed, and which
commit introduced those lines (read from `git blame`).

A fix commit is found by its message. The lines it removed or changed (old side, in source
files, tests left out) are blamed in the fix's parent; the commit most of them come from
introduced the bug, and those lines — new-side lines of that commit's own diff — label it.
"""

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from app.evaluation.cases import OBJECT_ID, Location
from app.evaluation.errors import HistoryError

_FIX = re.compile(r"\b(fix(e[sd]|ing)?|bug(s|fix)?|regression|broken?|breakage|crash(es)?)\b", re.I)
_NOT_A_BUG = re.compile(r"\b(typos?|docs?|documentation|readme|changelog|lint|spelling)\b", re.I)
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_tests?\.[^/]*$")
_BLAME_HEADER = re.compile(rf"^({OBJECT_ID}) (\d+) \d+")


def object_id(text: str) -> str:
    """`text`, if it is a full commit id as git prints one.

    Whatever git read from a history goes back to git only through here: a full id is hex
    digits and nothing else, so it can never be read as an option or a revision range.
    """
    if re.fullmatch(OBJECT_ID, text) is None:
        raise HistoryError(f"git printed {text[:80]!r} where a commit id belongs")
    return text


def is_fix(message: str) -> bool:
    """Whether a commit's subject says it fixes a bug (and not a typo or the docs)."""
    return bool(_FIX.search(message)) and not _NOT_A_BUG.search(message)


def is_source(path: str, suffixes: Sequence[str]) -> bool:
    """Whether `path` is code a case is about: one of `suffixes`, and not a test."""
    return path.endswith(tuple(suffixes)) and not _TEST_PATH.search(path)


def _patch(diff: str) -> PatchSet:
    try:
        return PatchSet(diff)
    except UnidiffParseError as exc:
        raise HistoryError(f"git printed a diff that does not parse: {exc}") from exc


def fixed_lines(diff: str, suffixes: Sequence[str]) -> dict[str, list[int]]:
    """The old-side lines a fix's diff removed or changed, by old path, in source files."""
    fixed: dict[str, list[int]] = {}
    for patched in _patch(diff):
        path = patched.source_file.removeprefix("a/")
        if patched.is_added_file or not is_source(path, suffixes):
            continue
        lines = [
            line.source_line_no
            for hunk in patched
            for line in hunk
            if line.is_removed and line.source_line_no is not None
        ]
        if lines:
            fixed[path] = lines
    return fixed


def ranges(lines: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted lines as runs of consecutive ones: [1, 2, 3, 7] → [(1, 3), (7, 7)]."""
    runs: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        if runs and runs[-1][1] == line - 1:
            runs[-1] = (runs[-1][0], line)
        else:
            runs.append((line, line))
    return runs


@dataclass(frozen=True, slots=True)
class Blamed:
    """A line as `git blame` traces it: the commit that wrote it, its path and line there."""

    commit: str
    path: str
    line: int
    boundary: bool = False
    """The commit is the history's root (or a shallow clone's edge): nothing before it."""


def parse_blame(porcelain: str) -> list[Blamed]:
    """The lines of `git blame --line-porcelain` output."""
    blamed: list[Blamed] = []
    commit, line, boundary = "", 0, False
    for row in porcelain.splitlines():
        if match := _BLAME_HEADER.match(row):
            commit, line, boundary = match[1], int(match[2]), False
        elif row == "boundary":
            boundary = True
        elif row.startswith("filename ") and commit:
            blamed.append(Blamed(commit, row.removeprefix("filename "), line, boundary))
    return blamed


def introducing(blamed: Sequence[Blamed]) -> tuple[str, list[Location]] | None:
    """The commit most of the fixed lines come from, and those lines of it by path (None when
    every line comes from the history's root)."""
    counts = Counter(b.commit for b in blamed if not b.boundary)
    if not counts:
        return None
    commit = counts.most_common(1)[0][0]
    by_path: dict[str, set[int]] = {}
    for b in blamed:
        if b.commit == commit:
            by_path.setdefault(b.path, set()).add(b.line)
    return commit, [Location(path=p, lines=tuple(sorted(ls))) for p, ls in by_path.items()]


def size(diff: str) -> tuple[int, int]:
    """Files a diff touches, and lines it adds or removes."""
    patch = _patch(diff)
    return len(patch), sum(f.added + f.removed for f in patch)
