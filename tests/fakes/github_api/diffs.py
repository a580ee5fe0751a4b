"""Diffs as the fake GitHub reads and writes them: the `GET /pulls/{n}/files` entries of a
unified diff and the diff of such entries, GitHub's diff positions in a file's patch and
the hunk above a line, and the patch from one content of a file to another.
"""

import difflib
import itertools
import re
from typing import Any

from unidiff.patch import PatchedFile, PatchSet

from tests.fakes.github_api.records import DiffLine


def _patch(old: bytes, new: bytes) -> str | None:
    """GitHub's `patch` from one content of a file to another: the hunks of a unified diff
    with three lines of context, no final newline; None for a binary file or no line changed."""
    try:
        before, after = old.decode(), new.decode()
    except UnicodeDecodeError:
        return None
    if "\0" in before or "\0" in after:
        return None
    rows: list[str] = []
    # The first two lines are the file headers (---, +++), which a patch has not.
    for line in itertools.islice(difflib.unified_diff(_lines(before), _lines(after)), 2, None):
        if line.endswith("\n"):
            rows.append(line[:-1])
        else:
            rows += [line, "\\ No newline at end of file"]
    return "\n".join(rows) or None


def _lines(text: str) -> list[str]:
    # Git's lines end at "\n" only (str.splitlines also ends one at "\r" and others).
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _diff_lines(patch: str) -> list[DiffLine]:
    """The lines of a file's patch (hunks only, no file headers) with their positions."""
    lines: list[DiffLine] = []
    position, hunk = 0, -1
    left = right = 0
    for text in patch.split("\n"):
        header = _HUNK_HEADER.match(text)
        if header:
            if hunk >= 0:
                position += 1  # later hunk headers count as diff positions
            hunk += 1
            left, right = int(header[1]), int(header[2])
            continue
        if hunk < 0:
            continue
        position += 1
        kind = text[:1]
        if kind == "+":
            lines.append(DiffLine(position, hunk, None, right))
            right += 1
        elif kind == "-":
            lines.append(DiffLine(position, hunk, left, None))
            left += 1
        elif kind == "\\":
            continue  # "\ No newline at end of file": a position, not a line of either file
        else:
            lines.append(DiffLine(position, hunk, left, right))
            left += 1
            right += 1
    return lines


def _find_line(lines: list[DiffLine], side: str, number: Any) -> DiffLine | None:
    if isinstance(number, bool) or not isinstance(number, int):
        return None
    for line in lines:
        if (line.right if side == "RIGHT" else line.left) == number:
            return line
    return None


def _diff_hunk(patch: str, position: int) -> str:
    """The patch's text from the header of the hunk holding `position` down to that line."""
    rows = patch.split("\n")
    start, current = -1, 0
    for index, text in enumerate(rows):
        if _HUNK_HEADER.match(text):
            if start >= 0:
                current += 1  # later hunk headers count as diff positions
            start = index
            continue
        if start < 0:
            continue
        current += 1
        if current == position:
            return "\n".join(rows[start : index + 1])
    return ""


def _entries_from_diff(diff: str) -> list[dict[str, Any]]:
    """The `GET /pulls/{n}/files` items of a unified diff (without the URL fields)."""
    if not diff.strip():
        return []
    raw_lines = diff.splitlines(keepends=True)
    entries: list[dict[str, Any]] = []
    for patched in PatchSet(diff):
        entry: dict[str, Any] = {
            "filename": patched.path,
            "status": _status(patched),
            "additions": patched.added,
            "deletions": patched.removed,
        }
        if patched.is_rename:
            entry["previous_filename"] = _strip_prefix(patched.source_file)
        if len(patched) and not patched.is_binary_file:
            entry["patch"] = _patch_text(patched, raw_lines)
        entries.append(entry)
    return entries


def _status(patched: PatchedFile) -> str:
    if patched.is_added_file:
        return "added"
    if patched.is_removed_file:
        return "removed"
    if patched.is_rename:
        return "renamed"
    return "modified"


def _strip_prefix(name: str) -> str:
    return name[2:] if name[:2] in ("a/", "b/") else name


def _patch_text(patched: PatchedFile, raw_lines: list[str]) -> str:
    """The file's hunks exactly as the diff has them: GitHub's `patch`, with no final newline."""
    pieces: list[str] = []
    for hunk in patched:
        numbers = [line.diff_line_no for line in hunk if line.diff_line_no is not None]
        first, last = min(numbers), max(numbers)
        end = last
        # unidiff keeps "\ No newline at end of file" without its line number.
        while end < len(raw_lines) and raw_lines[end].startswith("\\"):
            end += 1
        # The header sits just above the hunk's first line (diff_line_no counts from 1).
        pieces.append("".join(raw_lines[first - 2 : end]))
    text = "".join(pieces)
    return text[:-1] if text.endswith("\n") else text


def _diff_from_entries(entries: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for entry in entries:
        new = entry["filename"]
        old = entry.get("previous_filename", new)
        parts.append(f"diff --git a/{old} b/{new}\n")
        if entry["status"] == "added":
            parts.append("new file mode 100644\n")
        elif entry["status"] == "removed":
            parts.append("deleted file mode 100644\n")
        if "patch" in entry:
            source = "/dev/null" if entry["status"] == "added" else f"a/{old}"
            target = "/dev/null" if entry["status"] == "removed" else f"b/{new}"
            parts.append(f"--- {source}\n+++ {target}\n{entry['patch']}\n")
    return "".join(parts)
