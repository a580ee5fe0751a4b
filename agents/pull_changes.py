"""What a whole pull request changes, line by line, without its text: what a review unit
checks the coder's citations against, whatever unit changed the cited file.

A large pull request is split into review units, each debated on its own and shown only its
own slice of the diff. Evidence that a change of behaviour is intended (a changelog, docs, a
test) may sit in another unit's slice; a unit is handed the whole pull request's line numbers
(:class:`PullChanges`, small: ranges, no text), so that such a citation is checked as one of
its own files' would be, and the cited test is run at the head. Its agents read only the
paths of the files outside its slice and the lines changed there (:meth:`PullChanges.listed`),
never their diff: enough for the coder to know a changelog is there to cite.
"""

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

Span = tuple[int, int]
"""A run of line numbers, first and last included."""


def spans(numbers: Iterable[int]) -> tuple[Span, ...]:
    """`numbers` as runs of consecutive lines, in order."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return tuple((first, last) for first, last in runs)


def _within(spans_: Sequence[Span], n: int) -> bool:
    return any(first <= n <= last for first, last in spans_)


class FileChanges(BaseModel):
    """One file the pull request adds or changes (a deleted file is none)."""

    model_config = ConfigDict(frozen=True)

    path: str
    added: tuple[Span, ...] = ()
    """The new file's lines the pull request adds or changes."""
    shown: tuple[Span, ...] = ()
    """The new file's lines its diff shows: those it changes and the context around them."""

    def adds_any(self, start: int, end: int) -> bool:
        """Whether the pull request adds or changes any line of start..end."""
        return any(first <= end and start <= last for first, last in self.added)

    def shows_all(self, start: int, end: int) -> bool:
        """Whether the diff shows every line of start..end."""
        return all(_within(self.shown, n) for n in range(start, end + 1))

    def told(self) -> str:
        """The file as the agents read it in the list of other units' files: its path and
        the lines the pull request adds or changes there."""
        lines = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in self.added[:MAX_SPANS])
        more = ", …" if len(self.added) > MAX_SPANS else ""
        return f"{self.path} (lines {lines}{more})" if lines else self.path


MAX_SPANS = 6
"""The runs of changed lines listed per file of another unit: where its evidence would be."""
MAX_LISTED = 40
"""The files of other units listed to a unit's agents, at most: a short list, not a diff."""


class PullChanges(BaseModel):
    """Every file a pull request adds or changes, with the lines it changes and shows."""

    model_config = ConfigDict(frozen=True)

    files: tuple[FileChanges, ...] = ()

    def file(self, path: str) -> FileChanges | None:
        return next((f for f in self.files if f.path == path), None)

    def elsewhere(self, own: Iterable[str]) -> list[FileChanges]:
        """The files whose lines other units change: not among the paths `own`, in the
        diff's order (a file with no line to cite, renamed or binary, is not one)."""
        mine = set(own)
        return [f for f in self.files if f.path not in mine and f.added]

    def listed(self, own: Iterable[str]) -> str:
        """The other units' files as a unit's agents read them, one a line, at most
        :data:`MAX_LISTED` of them; empty when every file is the unit's own."""
        others = self.elsewhere(own)
        lines = [f.told() for f in others[:MAX_LISTED]]
        if len(others) > MAX_LISTED:
            lines.append(f"… and {len(others) - MAX_LISTED} more files")
        return "\n".join(lines)
