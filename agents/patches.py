"""Whether a patch or a finding may stand on a diff, and how large a patch is.

A patch may only replace lines the diff shows on the RIGHT side, all within one hunk (the
same rule GitHub applies to a committable suggestion), never on a protected path, and it
must change something. A finding must point at RIGHT-side lines of one hunk too, or it could
not be posted inline. Patches adopted on a diff are applied to a file's text at the head by
:func:`apply_patches`, for `/tiebreak apply`'s commit and for running a test with them.
"""

import difflib
import itertools
import re
from collections.abc import Sequence

from agents.diff import Diff
from agents.errors import DebateError
from agents.protocol import Finding, Patch
from policies.safety import ProtectedPaths

_LAST_LINE_ENDING = re.compile(r"\r?\n\Z")


class PatchError(DebateError):
    """Patches do not apply to a file's text. Indexes are into the patches given."""


class PatchesOverlap(PatchError):
    """Two patches of one file replace some of the same lines."""

    def __init__(self, first: int, second: int) -> None:
        super().__init__(f"patches {first} and {second} overlap")
        self.first = first
        self.second = second


class StaleLines(PatchError):
    """The lines a patch replaces are not, in the file, what the diff showed there."""

    def __init__(self, index: int) -> None:
        super().__init__(f"patch {index} replaces lines that are not what the diff shows")
        self.index = index


def patch_problem(patch: Patch, diff: Diff, protected: ProtectedPaths) -> str | None:
    """Why `patch` cannot be adopted on `diff`, or None if it can."""
    if reason := protected.forbids(patch.path):
        return f"patch refused: {reason}"
    span = _span_problem(diff, patch.path, patch.start_line, patch.end_line)
    if span:
        return f"patch refused: {span}"
    if _replacement_lines(patch) == current_lines(diff, patch):
        return f"patch refused: it does not change {patch.path}:{patch.start_line}"
    return None


def finding_problem(finding: Finding, diff: Diff) -> str | None:
    """Why `finding` cannot be raised on `diff`, or None if it can."""
    span = _span_problem(diff, finding.path, finding.start_line, finding.end_line)
    return f"finding refused: {span}" if span else None


def current_lines(diff: Diff, patch: Patch) -> list[str]:
    """The RIGHT-side text of the lines a (valid) patch replaces."""
    hunk = diff.hunk_covering(patch.path, patch.start_line, patch.end_line)
    if hunk is None:
        return []
    return [hunk.lines[n] for n in range(patch.start_line, patch.end_line + 1)]


def changed_lines(patch: Patch, diff: Diff) -> int:
    """How many lines the patch changes: a modified line counts once, as does each line
    added or removed."""
    before = current_lines(diff, patch)
    after = _replacement_lines(patch)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def _replacement_lines(patch: Patch) -> list[str]:
    """The replacement's lines, split the way git splits them: at newlines only."""
    if not patch.replacement:
        return []
    lines = patch.replacement.removesuffix("\n").split("\n")
    return [line.removesuffix("\r") for line in lines]


def _span_problem(diff: Diff, path: str, start: int, end: int) -> str | None:
    if diff.file(path) is None:
        return f"{path} is not part of this diff"
    if diff.hunk_covering(path, start, end) is None:
        return f"{path}:{start}-{end} is not within one hunk of the diff's new-file lines"
    return None


def apply_patches(text: str, patches: Sequence[Patch], diff: Diff) -> str:
    """`text` (one file at the head) with `patches` (all on that file, adopted on `diff`)
    applied. Raise :class:`PatchesOverlap` if two of them share a line, :class:`StaleLines` if
    the lines one replaces are not those `diff` shows there.

    Lines are counted as git counts them (split at newlines only); new lines take the file's
    usual ending, so a CRLF file stays CRLF, and a file without a final newline keeps lacking
    one, whatever its last line became.
    """
    lines = _git_lines(text)
    ending = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    ordered = sorted(enumerate(patches), key=lambda item: item[1].start_line)
    for (first, a), (second, b) in itertools.pairwise(ordered):
        if b.start_line <= a.end_line:
            raise PatchesOverlap(first, second)
    # From the bottom up, so the line numbers of the patches still to apply stay valid.
    for index, patch in reversed(ordered):
        seen = current_lines(diff, patch)
        now = [line.rstrip("\r\n") for line in lines[patch.start_line - 1 : patch.end_line]]
        if not seen or now != seen:
            raise StaleLines(index)
        # Split exactly as the review's committable suggestion of this patch was.
        new = [line + ending for line in _replacement_lines(patch)]
        lines[patch.start_line - 1 : patch.end_line] = new
    patched = "".join(lines)
    if text and not text.endswith("\n"):
        patched = _LAST_LINE_ENDING.sub("", patched)
    return patched


def _git_lines(text: str) -> list[str]:
    """Each line with its own ending; the last without one if the text has no final newline."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    return [*lines, pieces[-1]] if pieces[-1] else lines
