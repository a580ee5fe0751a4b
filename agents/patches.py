"""Whether a patch or a finding may stand on a diff, and how large a patch is.

A patch may only replace lines the diff shows on the RIGHT side, all within one hunk (the
same rule GitHub applies to a committable suggestion), never on a protected path, and it
must change something. A finding must point at RIGHT-side lines of one hunk too, or it could
not be posted inline.
"""

import difflib

from agents.diff import Diff
from agents.protocol import Finding, Patch
from policies.safety import ProtectedPaths


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
