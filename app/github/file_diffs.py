"""A pull request's diff rebuilt from the files API, for pull requests above GitHub's diff
limits (where the diff media type answers 406).

Each file the API lists becomes the section `git diff` would print for it: the `diff --git`
line, then what kind of change it is (`new file mode`, `deleted file mode`, `similarity
index` with `rename from`/`rename to` or `copy from`/`copy to`), then the `---`/`+++` lines
and the file's patch. Without those lines a unified-diff parser cannot tell a deleted file
(`+++ /dev/null`) from a malformed diff. A file the API gives no patch for (binary, or too
large for GitHub to show) keeps its header alone: the API does not say which of the two it
is, and a header alone claims neither.
"""

from app.github.answers import ChangedFile

REGULAR_FILE = "100644"
"""The mode given to an added or deleted file: the files API does not say a file's mode."""


def file_section(entry: ChangedFile) -> str:
    """One item of `GET /pulls/{n}/files` as `git diff` prints it; empty for a file the
    API lists as unchanged and gives no patch for (git prints nothing for it)."""
    name = entry.filename
    old = entry.previous_filename or name
    status = entry.status
    patch = entry.patch or ""
    if status == "unchanged" and not patch:
        return ""
    lines = [f"diff --git a/{old} b/{name}"]
    if status == "added":
        lines.append(f"new file mode {REGULAR_FILE}")
    elif status == "removed":
        lines.append(f"deleted file mode {REGULAR_FILE}")
    elif status in ("renamed", "copied") and old != name:
        kind = "rename" if status == "renamed" else "copy"
        if not patch and not entry.changes:
            # Nothing changed but the name: git's exact similarity. Otherwise it is unknown.
            lines.append("similarity index 100%")
        lines += [f"{kind} from {old}", f"{kind} to {name}"]
    if patch:
        source = "/dev/null" if status == "added" else f"a/{old}"
        target = "/dev/null" if status == "removed" else f"b/{name}"
        lines += [f"--- {source}", f"+++ {target}", patch.removesuffix("\n")]
    return "\n".join(lines) + "\n"
