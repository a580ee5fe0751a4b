"""The code around a review unit's changes, as its agents read it beside the diff.

For each hunk, the functions and classes enclosing its changed lines (`agents.context.scopes`; one
the hunk adds whole is read in the diff, and brings only the signature of the class around
it; an added blank line brings nothing), then the
helpers in the same file those lines call, then what the repository's other files tell about
the change when they were read (`agents.context.related`: the definitions of the names it uses, the
callers of the functions it changes, the tests that call them), then the whole file when it
is small — in that order of relevance, within a budget of tokens per unit. The scope around a
change is never left out: one the budget cannot hold whole is shown in part
(`agents.context.elision`), its signature and the lines around its changes. What the budget leaves
out is listed by name at the end, each piece once, never dropped silently; a search of the
other files that stopped short is said once. The text is built once per unit and is the same
on every call of its debate, so it sits in the cached prefix after the diff. A review reads,
splits and parses each file once, however many of its units and hunks touch it.

Every line shown is the file at the pull request's head, numbered as the diff's new side
numbers it; findings and patches still land only on the diff's own lines
(`agents.debate.input_checks`).
"""

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from agents.context.elision import MIN_WINDOW, Part, widest_window
from agents.context.related import Excerpt, ExcerptKind, Related
from agents.context.scopes import Outline, Scope, outline
from agents.conventions import ProjectTests
from agents.diff import Diff, DiffFile, ReviewUnit
from agents.models.tokens import typical_tokens
from policies.guidance import Guidance

MIN_TOKENS = 1_000
"""The least a unit's default budget allows, so a one-line change still gets its function."""
DEFAULT_MAX_TOKENS = 8_000
"""The most a unit's default budget allows: about the diff's own size, up to this."""
SMALL_FILE_TOKENS = 2_000
"""A changed file this small is shown whole, when the budget has room for it."""
MAX_SOURCE_CHARS = 1_000_000
"""A larger file is not parsed: its changes get no context."""

_ENCLOSING, _CALLED, _WHOLE = 0, 1, 5
"""Relevance ranks: the scope around a change, a helper the change calls, the whole file."""
_RELATED = {ExcerptKind.DEFINITION: 2, ExcerptKind.CALLER: 3, ExcerptKind.TEST: 4}
"""Relevance ranks of what other files tell, between the helpers and the whole file."""


@dataclass(frozen=True)
class Reading:
    """What a review's agents read beside each unit's diff."""

    sources: Mapping[str, str] | None = None
    """Each changed file's text at the head, by path; None for no context at all."""
    max_tokens: int | None = None
    """The context budget per unit; None for :func:`default_budget`."""
    guidance: Guidance = field(default_factory=Guidance)
    outlines: Mapping[str, Outline] = field(default_factory=dict)
    """Files of `sources` already parsed, by path (the App parses untrusted files where a
    parse can be stopped: `app.parsing`); the others are parsed here, when first needed."""
    related: Related | None = None
    """What the repository's other files tell about the diff, found where the files could be
    read within bounds (`app.parsing`); None when no more than the changed files was read."""
    intent: str = ""
    """What the pull request says it does (`agents.intent`), the same for every unit."""
    conventions: ProjectTests | None = None
    """How the repository's tests are written and run (`agents.conventions`), the same for
    every unit; None when no test is run."""

    def attach(self, units: Iterable[ReviewUnit]) -> list[ReviewUnit]:
        """`units` with their context, guidance, intent and tests' conventions."""
        # One read of each file for the whole review, however many units and hunks touch it.
        files = None if self.sources is None else _Files(self.sources, self.outlines)
        return [
            replace(
                unit,
                context=""
                if files is None
                else _context(unit.diff, files, self.max_tokens, self.related),
                guidance=self.guidance.for_paths(unit.diff.paths),
                intent=self.intent,
                conventions=self.conventions,
            )
            for unit in units
        ]


def default_budget(diff: Diff) -> int:
    """About the unit's diff size, between :data:`MIN_TOKENS` and :data:`DEFAULT_MAX_TOKENS`."""
    return max(MIN_TOKENS, min(typical_tokens(diff.text), DEFAULT_MAX_TOKENS))


@dataclass(frozen=True, slots=True)
class _Piece:
    path: str
    scope: Scope
    rank: int
    why: str
    changes: tuple[int, ...] = ()
    """The changed lines it encloses, for the scope around a change."""
    inner: tuple[Scope, ...] = ()
    """The scopes around other changes inside it, whose signatures it shows when in part."""


class _File:
    """A changed file at the head as the context reads it: split into lines, parsed and each
    piece of it rendered at most once per review."""

    @classmethod
    def excerpted(cls, path: str, excerpts: Iterable[Excerpt]) -> "_File":
        """Another file of the repository, of which only the lines of `excerpts` are known."""
        known = {e.first + i: line for e in excerpts for i, line in enumerate(e.lines)}
        excerpted = cls(path, "", Outline(max(known, default=0)), small=False)
        # Set, not split from a text: an excerpt may end on blank lines.
        excerpted.lines = [known.get(n, "") for n in range(1, max(known, default=0) + 1)]
        return excerpted

    def __init__(
        self, path: str, text: str, parsed: Outline | None = None, small: bool | None = None
    ) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.small = typical_tokens(text) <= SMALL_FILE_TOKENS if small is None else small
        self._text = text
        self._outline = parsed
        self._rendered: dict[tuple[Scope, str], tuple[str, int]] = {}
        self._parts: dict[tuple[_Piece, int], tuple[str, int]] = {}

    @property
    def outline(self) -> Outline:
        if self._outline is None:
            self._outline = outline(self.path, self._text)
        return self._outline

    def render(self, piece: _Piece) -> tuple[str, int]:
        """The piece's text, and its tokens."""
        key = (piece.scope, piece.why)
        if key not in self._rendered:
            first, last, lines = piece.scope.first, piece.scope.last, self.lines
            body = "".join(f"{n:>5} {lines[n - 1]}\n" for n in range(first, last + 1))
            text = f"{self.path} lines {first}-{last}: {piece.why}\n{body}"
            self._rendered[key] = text, typical_tokens(text)
        return self._rendered[key]

    def render_part(self, piece: _Piece, window: int) -> tuple[str, int]:
        """The piece shown in part, `window` lines either side of its changes, and its
        tokens."""
        key = (piece, window)
        if key not in self._parts:
            scope = piece.scope
            heads = [(s.first, s.head) for s in (scope, *piece.inner) if s.head]
            part = Part.of(scope.first, scope.last, heads, piece.changes)
            if part.widest(window):  # all of it: the piece whole, rendered once
                self._parts[key] = self.render(piece)
            else:
                head = f"{self.path} lines {scope.first}-{scope.last} (shown in part): "
                text = f"{head}{piece.why}\n{part.render(self.lines, window)}"
                self._parts[key] = text, typical_tokens(text)
        return self._parts[key]


class _Files:
    """The changed files of a review, each read once, on first use."""

    def __init__(self, sources: Mapping[str, str], outlines: Mapping[str, Outline]) -> None:
        self._sources = sources
        self._outlines = outlines
        self._files: dict[str, _File | None] = {}

    def get(self, path: str) -> _File | None:
        """The file at `path`; None when it was not read or is too large to parse."""
        if path not in self._files:
            text = self._sources.get(path)
            if text is None or len(text) > MAX_SOURCE_CHARS:
                self._files[path] = None
            else:
                self._files[path] = _File(path, text, self._outlines.get(path))
        return self._files[path]


def unit_context(
    diff: Diff,
    sources: Mapping[str, str],
    max_tokens: int | None = None,
    related: Related | None = None,
) -> str:
    """The context of the unit `diff` from `sources` (each file's text at the head, by
    path) and what other files tell of it (`related`), at most about `max_tokens` tokens
    (default :func:`default_budget`); empty when there is none."""
    return _context(diff, _Files(sources, {}), max_tokens, related)


def _context(
    diff: Diff, sources: _Files, max_tokens: int | None, related: Related | None = None
) -> str:
    budget = default_budget(diff) if max_tokens is None else max_tokens
    if budget <= 0:
        return ""
    read = {f.path: sources.get(f.path) for f in diff.files}
    files = {path: file for path, file in read.items() if file is not None}
    unread = [f.path for f in diff.files if f.path not in files]
    excerpts = related.of(diff) if related is not None else []
    pieces = sorted([*_pieces(diff, files), *_related(excerpts, files)], key=lambda p: p.rank)
    shown, parts, window, cut = _fitted(pieces, files, budget)
    rendered = {p: files[p.path].render(p)[0] for p in shown}
    rendered |= {p: files[p.path].render_part(p, window)[0] for p in parts}
    text = "\n".join(rendered[p] for p in _in_file_order(diff, [*shown, *parts]))
    notes = [
        f"Left out for the context budget of {budget:,} tokens: "
        + "; ".join(f"{p.path} lines {p.scope.first}-{p.scope.last} ({p.why})" for p in cut)
    ] * bool(cut)
    if related is not None and related.note:
        notes.append(f"{related.note}.")
    if unread:
        notes.append("Not read (deleted, binary, too large or unavailable): " + ", ".join(unread))
    unparsed = [f"{p} ({f.outline.unparsed})" for p, f in files.items() if f.outline.unparsed]
    if unparsed:
        notes.append(
            "Not parsed, so no enclosing function or class is known: " + ", ".join(unparsed)
        )
    return "\n".join(filter(None, [text, *notes]))


def _fitted(
    pieces: list[_Piece], files: Mapping[str, _File], budget: int
) -> tuple[list[_Piece], list[_Piece], int, list[_Piece]]:
    """Of `pieces`, by rank, those shown whole, those shown in part (the scopes around changes
    too large for the budget), the window around their changes, and those left out."""
    # The scope around every change is shown, in part at least: its narrowest form is paid
    # for first, and a scope that fits whole later takes back what its part cost.
    parts = [p for p in pieces if p.rank == _ENCLOSING]
    window = MIN_WINDOW
    if _parts_cost(parts, files, window) > budget:
        window = widest_window(lambda w: _parts_cost(parts, files, w), budget, 0, MIN_WINDOW)
    paid = {p: files[p.path].render_part(p, window)[1] for p in parts}
    spent = sum(paid.values())
    shown: list[_Piece] = []
    cut: list[_Piece] = []
    for piece in pieces:
        mine = [s for s in shown if s.path == piece.path]
        if any(_inside(piece.scope, s.scope) for s in mine):
            continue  # already shown, whole or in a larger scope
        held = [s for s in mine if _inside(s.scope, piece.scope)]
        held_parts = [p for p in paid if p.path == piece.path and _inside(p.scope, piece.scope)]
        cost = files[piece.path].render(piece)[1] - sum(files[s.path].render(s)[1] for s in held)
        cost -= sum(paid[p] for p in held_parts)
        if spent + cost > budget:
            if piece.rank != _ENCLOSING:  # which stays, in part
                cut.append(piece)
            continue
        shown = [s for s in shown if s not in held] + [piece]
        spent += cost
        for part in held_parts:
            del paid[part]
    # What the rest left widens the window around the changes of the scopes still in part.
    parts, base = list(paid), spent - sum(paid.values())
    widest = max((p.scope.last - p.scope.first for p in parts), default=0)
    window = widest_window(lambda w: base + _parts_cost(parts, files, w), budget, window, widest)
    return shown, parts, window, cut


def _parts_cost(parts: list[_Piece], files: Mapping[str, _File], window: int) -> int:
    return sum(files[p.path].render_part(p, window)[1] for p in parts)


def _pieces(diff: Diff, files: Mapping[str, _File]) -> Iterator[_Piece]:
    """Each file's pieces, each once: the scope around several hunks, or the function a
    change calls and another change sits in, is one piece at its best rank."""
    for diff_file in diff.files:
        path = diff_file.path
        file = files.get(path)
        if file is None or not file.lines:
            continue
        count, parsed = len(file.lines), file.outline
        around: dict[Scope, list[int]] = {}
        for hunk in diff_file.hunks:
            # An added blank line changes nothing a reader needs code around.
            added = [n for n in hunk.added() if n <= count and file.lines[n - 1].strip()]
            lines = added or [min(hunk.target_start, count)]
            for scope, mine in parsed.around(lines, added=bool(added)):
                around.setdefault(_clamped(scope, count), []).extend(mine)
        seen = {(scope.first, scope.last) for scope in around}
        for scope, (lines, inner) in _folded(around).items():
            why = f"{scope.what}, around a change"
            yield _Piece(path, scope, _ENCLOSING, why, tuple(lines), tuple(inner))
        changed = [n for lines in around.values() for n in lines]
        for callee in parsed.callees(changed):
            scope = _clamped(callee, count)
            if (scope.first, scope.last) not in seen:
                seen.add((scope.first, scope.last))
                yield _Piece(path, scope, _CALLED, f"{scope.what}, called by a change")
        if file.small and (1, count) not in seen:
            yield _Piece(path, Scope(1, count, "the whole file"), _WHOLE, "the whole file")


def _related(excerpts: list[Excerpt], files: dict[str, _File]) -> Iterator[_Piece]:
    """The pieces of other files, each of which joins `files` with the lines it shows."""
    for path in dict.fromkeys(e.path for e in excerpts):
        if path not in files:
            files[path] = _File.excerpted(path, [e for e in excerpts if e.path == path])
    for e in excerpts:
        yield _Piece(e.path, Scope(e.first, e.last, e.why), _RELATED[e.kind], e.why)


def _folded(around: dict[Scope, list[int]]) -> dict[Scope, tuple[list[int], list[Scope]]]:
    """Each outermost scope around changes, with all the changes and the scopes inside it."""
    outer: dict[Scope, tuple[list[int], list[Scope]]] = {}
    last: Scope | None = None
    # In order of first line, widest first: a scope inside another follows it, and is
    # inside the last outermost one (scopes nest, or do not meet).
    for scope in sorted(around, key=lambda s: (s.first, -s.last)):
        if last is not None and _inside(scope, last):
            outer[last][0].extend(around[scope])
            outer[last][1].append(scope)
        else:
            outer[scope], last = (list(around[scope]), []), scope
    return outer


def _clamped(scope: Scope, count: int) -> Scope:
    first, last = max(1, scope.first), min(scope.last, count)
    return Scope(first, last, scope.what, scope.head and min(max(scope.head, first), last))


def _inside(inner: Scope, outer: Scope) -> bool:
    return outer.first <= inner.first and inner.last <= outer.last


def _in_file_order(diff: Diff, pieces: list[_Piece]) -> list[_Piece]:
    order = {f.path: i for i, f in enumerate(diff.files)}
    # Other files follow the diff's, by path.
    return sorted(pieces, key=lambda p: (order.get(p.path, len(order)), p.path, p.scope.first))


def changed_files(diff: Diff) -> list[DiffFile]:
    """The files of `diff` whose head text the context reads: those with new-side lines."""
    return [f for f in diff.files if not f.deleted and not f.binary and f.hunks]
