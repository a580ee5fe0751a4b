"""A pull request's unified diff, parsed with unidiff, and its review units.

The engine needs three things from a diff: the text to show the agents, which new-file
(RIGHT side) lines each path exposes — a patch or an inline comment may only land there —
and the current text of those lines. A diff too large for one debate is split into review
units: whole files grouped under a token limit, and a file larger than the limit split at
hunk boundaries.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from agents.conventions import ProjectTests
from agents.errors import DiffError
from agents.failures.additions import Additions
from agents.models.tokens import typical_tokens
from agents.pull_changes import FileChanges, PullChanges, spans
from policies.coverage import rank

_TARGET = re.compile(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
"""A hunk's `@@` line: where its RIGHT side starts, and how many lines it has (one if not
said)."""

DEFAULT_UNIT_TOKENS = 12_000
"""Diff tokens per review unit: enough context for a debate, small enough to stay cheap."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """One hunk of one file; `lines` maps each RIGHT-side line number to its text."""

    path: str
    target_start: int
    target_length: int
    lines: dict[int, str]
    text: str

    @classmethod
    def rebuilt(cls, path: str, text: str) -> "Hunk":
        """The hunk of `path` whose text (its `@@` line first) is `text`, as :meth:`Diff.parse`
        made it: what a review unit's plan keeps of its hunks, read back without parsing a diff
        again."""
        header = text.split("\n", 1)[0]
        found = _TARGET.match(header)
        if found is None:
            raise DiffError(f"a hunk of {path} starts with no @@ line: {header[:80]!r}")
        start, length = int(found[1]), int(found[2] or 1)
        lines: dict[int, str] = {}
        line = start
        for raw in _body(text):
            if raw[:1] in ("+", " ") or raw in ("", "\r"):  # added, or kept (even emptied)
                lines[line] = raw[1:].rstrip("\r")
                line += 1
        return cls(path, start, length, lines, text)

    def covers(self, start: int, end: int) -> bool:
        """Whether every line of start..end is a RIGHT-side line of this hunk."""
        return all(n in self.lines for n in range(start, end + 1))

    def added(self) -> list[int]:
        """The RIGHT-side numbers of the lines the hunk adds or changes."""
        added, line = [], self.target_start
        for raw in _body(self.text):
            if raw.startswith("+"):
                added.append(line)
                line += 1
            elif raw.startswith(" ") or raw in ("", "\r"):
                line += 1
        return added


@dataclass(frozen=True, slots=True)
class DiffFile:
    """One file's changes. A deleted or binary file has no RIGHT-side lines."""

    path: str
    header: str
    hunks: tuple[Hunk, ...]
    deleted: bool = False
    binary: bool = False

    @property
    def text(self) -> str:
        return self.header + "".join(h.text for h in self.hunks)

    def right_lines(self) -> frozenset[int]:
        return frozenset(n for h in self.hunks for n in h.lines)

    @property
    def created(self) -> bool:
        """Whether the change creates the file (git's `--- /dev/null`)."""
        return "--- /dev/null" in self.header.splitlines()

    def added_lines(self) -> list[str]:
        """The text of each line the change adds or changes, in order."""
        return [
            raw[1:].rstrip("\r")
            for hunk in self.hunks
            for raw in _body(hunk.text)
            if raw[:1] == "+"
        ]

    @property
    def changed_lines(self) -> int:
        """Lines added or removed."""
        return sum(line[:1] in ("+", "-") for hunk in self.hunks for line in _body(hunk.text))

    @classmethod
    def rebuilt(
        cls, path: str, header: str, hunks: Iterable[str], deleted: bool, binary: bool
    ) -> "DiffFile":
        """The file of `path` whose header and hunks' texts are these, as :meth:`Diff.parse`
        made it (see :meth:`Hunk.rebuilt`)."""
        return cls(path, header, tuple(Hunk.rebuilt(path, h) for h in hunks), deleted, binary)

    def with_hunks(self, hunks: Iterable[Hunk]) -> "DiffFile":
        return DiffFile(self.path, self.header, tuple(hunks), self.deleted, self.binary)


@dataclass(frozen=True)
class Diff:
    """A set of file changes: the whole pull request, or one review unit of it."""

    files: tuple[DiffFile, ...]
    _by_path: dict[str, DiffFile] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_path", {f.path: f for f in self.files})

    @classmethod
    def parse(cls, text: str, *, allow_empty: bool = False) -> "Diff":
        """Parse a unified diff (git's format). Raise :class:`DiffError` if it is not one.

        Empty text is an error too, unless `allow_empty`: a pull request can change nothing
        (or nothing a review covers).
        """
        if allow_empty and not text.strip():
            return cls(())
        if text.split("\n", 1)[0].endswith("\r"):
            # A whole diff saved with CRLF line endings (a browser form, a Windows editor);
            # git writes its own lines with LF even when the content has CRLF.
            text = text.replace("\r\n", "\n")
        try:
            patch_set = PatchSet(text)
        except UnidiffParseError as exc:
            raise DiffError(f"malformed diff: {exc}") from exc
        if not len(patch_set):
            raise DiffError("no file changes found: the input is empty or not a unified diff")
        return cls(tuple(_file(f) for f in patch_set))

    @cached_property
    def text(self) -> str:
        return "".join(f.text for f in self.files)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(self._by_path)

    def file(self, path: str) -> DiffFile | None:
        return self._by_path.get(path)

    @property
    def binaries(self) -> tuple[str, ...]:
        """The binary files the change adds or changes: no unit holds them, as they have no
        lines to review, and a review names them as not reviewed."""
        return tuple(f.path for f in self.files if f.binary and not f.deleted)

    def additions(self) -> Additions:
        """The modules and names the change adds (:mod:`agents.failures.additions`)."""
        kept = [f for f in self.files if not f.deleted and not f.binary]
        return Additions.of(
            (f.path for f in kept if f.created),
            ((f.path, line) for f in kept for line in f.added_lines()),
        )

    def changes(self) -> PullChanges:
        """The lines each file it adds or changes has changed and shown, without their text
        (:mod:`agents.pull_changes`)."""
        return PullChanges(
            files=tuple(
                FileChanges(
                    path=f.path,
                    added=spans(n for hunk in f.hunks for n in hunk.added()),
                    shown=spans(f.right_lines()),
                )
                for f in self.files
                if not f.deleted
            )
        )

    def hunk_covering(self, path: str, start: int, end: int) -> Hunk | None:
        """The hunk whose RIGHT side holds all of start..end of `path`, if any."""
        diff_file = self._by_path.get(path)
        if diff_file is None:
            return None
        return next((h for h in diff_file.hunks if h.covers(start, end)), None)

    def units(
        self, max_tokens: int = DEFAULT_UNIT_TOKENS, changes: PullChanges | None = None
    ) -> list["ReviewUnit"]:
        """Split into review units of at most about `max_tokens` diff tokens each, each
        checking citations against `changes` (the pull request's changed lines; None: this
        diff's own).

        Files come riskiest first (:mod:`policies.coverage`), so that a ceiling too small for
        the whole diff is spent on them: the units are reviewed in their order (inside a unit,
        its files keep the diff's order). Files stay whole where they fit; a file larger than
        the limit is cut at hunk boundaries (a single hunk larger than the limit stays one
        unit). Files with nothing to review on the RIGHT side (deleted, binary) are left out.
        """
        ranked = sorted(self.files, key=lambda f: rank(f.path, f.changed_lines))
        batches: list[list[DiffFile]] = []
        size = 0
        for piece in _pieces(ranked, max_tokens):
            tokens = typical_tokens(piece.text)
            # Two pieces of one split file never share a unit: a unit knows a path once.
            same_file = bool(batches) and any(f.path == piece.path for f in batches[-1])
            if not batches or same_file or size + tokens > max_tokens:
                batches.append([])
                size = 0
            batches[-1].append(piece)
            size += tokens
        # Inside a unit the files read in the diff's order, as a person reads the diff.
        order = {f.path: n for n, f in enumerate(self.files)}
        changes = self.changes() if changes is None else changes
        return [
            ReviewUnit(
                f"u{i}", Diff(tuple(sorted(b, key=lambda f: order[f.path]))), changes=changes
            )
            for i, b in enumerate(batches, 1)
        ]


@dataclass(frozen=True, slots=True)
class ReviewUnit:
    """The part of a diff one debate reviews, and what its agents read beside it."""

    id: str
    diff: Diff
    context: str = ""
    """The code around its changes at the head (`agents.context.reading`); empty for none."""
    guidance: str = ""
    """The repository's guidance for its files (`policies.guidance`); empty for none."""
    learned: tuple[str, ...] = ()
    """The repository's learnings its agents read in `guidance`, each as they read it."""
    intent: str = ""
    """What the pull request says it does, as its agents read it (`agents.intent`): the
    same for every unit of a review; empty for nothing said."""
    conventions: ProjectTests | None = None
    """How the repository's tests are written and run (`agents.conventions`), when its
    findings' tests run: the same for every unit of a review."""
    changes: PullChanges | None = None
    """The whole pull request's changed lines, against which a citation of evidence is
    checked (`agents.pull_changes`): the same for every unit of a review; None: the unit's
    own diff is all there is."""

    @property
    def pull_changes(self) -> PullChanges:
        """What the pull request changes, as far as the unit knows it."""
        return self.diff.changes() if self.changes is None else self.changes

    @property
    def elsewhere(self) -> str:
        """The files the pull request changes outside the unit's slice, as its agents read
        them: no diff, their paths and changed lines (`agents.pull_changes`); empty for
        none."""
        return "" if self.changes is None else self.changes.listed(self.diff.paths)


def diff_text(data: bytes) -> str:
    """A diff's bytes as text; raise :class:`DiffError` naming the first byte that is not UTF-8.

    Nothing tells a diff's encoding: any guess (Latin-1, a code page) could show the agents
    other characters than the file holds, and a patch written back in UTF-8 would change the
    file's encoding. So a diff is read as UTF-8 or not at all, and the error says where, and in
    which file, so that the file can be converted or left out of the diff.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        path = _file_at(data, exc.start)
        byte = f"byte {exc.start} (0x{data[exc.start]:02x})"
        if path is None:
            raise DiffError(
                f"the diff is not UTF-8: {byte} starts no UTF-8 character; Tiebreak reads UTF-8 "
                "only"
            ) from None
        raise DiffError(
            f"the diff is not UTF-8: {byte}, in {path}, starts no UTF-8 character; Tiebreak "
            f"reads UTF-8 only: convert that file's text, or leave it out "
            f"(git diff -- . ':!{path}')"
        ) from None


def _file_at(data: bytes, offset: int) -> str | None:
    """The file whose lines hold `offset` of a diff, when its `---`/`+++` lines come before."""
    for line in reversed(data[:offset].split(b"\n")[:-1]):
        name = line.rstrip(b"\r").decode("utf-8")  # before `offset`: UTF-8
        if name.startswith("+++ ") and name != "+++ /dev/null":
            return name[4:].removeprefix("b/")
        if name.startswith("--- a/"):
            return name[6:]
        if name.startswith("diff --git "):
            return None
    return None


def _file(patched: PatchedFile) -> DiffFile:
    hunks = tuple(
        Hunk(
            path=patched.path,
            target_start=h.target_start,
            target_length=h.target_length,
            lines={
                line.target_line_no: line.value.rstrip("\r\n")
                for line in h
                if line.target_line_no is not None
            },
            text=str(h),
        )
        for h in patched
    )
    whole = str(patched)
    header = whole.removesuffix("".join(h.text for h in hunks))
    return DiffFile(
        path=patched.path,
        header=header,
        hunks=hunks,
        deleted=patched.is_removed_file,
        binary=patched.is_binary_file,
    )


def _body(hunk: str) -> list[str]:
    """A hunk's lines after its `@@` line, each ending at "\n" alone as unidiff reads them: a
    form feed, a "\r" or another of the characters `str.splitlines` breaks at stays in its
    line."""
    return hunk.removesuffix("\n").split("\n")[1:]


def _pieces(files: Iterable[DiffFile], max_tokens: int) -> Iterator[DiffFile]:
    for diff_file in files:
        if diff_file.deleted or diff_file.binary or not diff_file.hunks:
            continue
        if typical_tokens(diff_file.text) <= max_tokens:
            yield diff_file
            continue
        chunk: list[Hunk] = []
        size = typical_tokens(diff_file.header)
        for hunk in diff_file.hunks:
            tokens = typical_tokens(hunk.text)
            if chunk and size + tokens > max_tokens:
                yield diff_file.with_hunks(chunk)
                chunk, size = [], typical_tokens(diff_file.header)
            chunk.append(hunk)
            size += tokens
        yield diff_file.with_hunks(chunk)
