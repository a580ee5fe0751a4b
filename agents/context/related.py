"""What the rest of a repository tells about a diff's changes, read across its files.

For each changed function or class, three kinds of excerpt from other files of the
repository at the diff's new side, in this order of relevance:

1. **definitions** of the names its changed lines use (a helper's contract, a constant, a
   class): Python's followed through the file's imports (:mod:`agents.context.python_names`),
   other languages' found by name among the scopes tree-sitter outlines
   (:mod:`agents.context.named_scopes`);
2. **callers**: the lines around each call, in another file, of a function whose body or
   signature the change touches (at most :data:`CALLERS` a function);
3. **tests**: the project's test functions that call it (at most :data:`TESTS`), so that the
   tester sees how tests are written here.

The agents read them after the changed code's own scopes (`agents.context.reading` ranks each kind
after the enclosing scopes and the helpers of the same file, before a whole file), within
the same budget. The analysis is pure: it is handed a :class:`SourceTree`, a reader of the
repository's files (the App's parsing processes give it one over a directory: `app.parsing`),
and bounded by :class:`Bounds` — files listed, files and bytes read, seconds spent. When a
bound is reached, what was found so far is kept and the agents are told once that the search
stopped; a tree too large to search gives no excerpt, and the agents are told that only the
changed files' code is shown.
"""

import posixpath
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from agents.context.named_scopes import named_definitions
from agents.context.python_names import Call, Definition, Module, Modules
from agents.context.scopes import LANGUAGES
from agents.diff import Diff, DiffFile

CALLERS = 4
"""Call sites shown for one changed function, each in its own enclosing scope."""
TESTS = 2
"""Test functions shown for one changed function."""
DEFINITION_LINES = 40
"""A longer definition is shown by its first lines: its signature and contract."""
CALL_LINES = 25
"""A call's enclosing function is shown whole up to this size; a larger one, by the lines
around the call."""
AROUND_CALL = 3

FALLBACK = "Other files of the repository were not read"
PARTIAL = "Other files of the repository were read in part"


class SourceTree(Protocol):
    """A repository's files at the diff's new side, as the analysis may read them."""

    def paths(self, limit: int) -> Sequence[str]:
        """The tree's files ('/'-separated, relative), at most `limit` of them."""
        ...

    def read(self, path: str) -> str | None:
        """The text of the file at `path`; None when it is no regular file of the tree or
        is too large to read."""
        ...


@dataclass(frozen=True)
class Bounds:
    """What one analysis may spend."""

    seconds: float = 10.0
    listed: int = 20_000
    """Files in the tree: a larger tree is not searched at all."""
    files: int = 2_000
    """Files read."""
    bytes: int = 16 * 2**20
    """Bytes read, all files together: their parsed trees, kept for the whole search, take
    tens of times as much memory, which the parsing process caps (`app.parsing`)."""


class ExcerptKind(IntEnum):
    """What an excerpt is to the change, most relevant first."""

    DEFINITION = 1
    CALLER = 2
    TEST = 3


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Lines `first`… of a file (`lines`, as numbered there), and why they are shown."""

    path: str
    first: int
    lines: tuple[str, ...]
    why: str
    kind: ExcerptKind
    origin: str
    """The changed file it is about."""
    changes: tuple[int, int]
    """The first and last line of `origin`, at the new side, it is about."""

    @property
    def last(self) -> int:
        return self.first + len(self.lines) - 1


@dataclass(frozen=True)
class Related:
    """What the analysis found for a whole diff, and what the agents must be told of it."""

    excerpts: tuple[Excerpt, ...] = ()
    note: str = ""
    """Why other files were not read, or not all of them; empty when nothing was missed."""

    def of(self, diff: Diff) -> list[Excerpt]:
        """The excerpts about the changes of `diff` (a review unit), each place once, the
        most relevant first."""
        seen: set[tuple[str, int, int]] = set()
        chosen: list[Excerpt] = []
        for excerpt in sorted(self.excerpts, key=lambda e: e.kind):
            changed = diff.file(excerpt.origin)
            first, last = excerpt.changes
            if changed is None or not any(first <= n <= last for n in changed.right_lines()):
                continue
            place = (excerpt.path, excerpt.first, excerpt.last)
            if place not in seen:
                seen.add(place)
                chosen.append(excerpt)
        return chosen


def related(
    diff: Diff,
    tree: SourceTree,
    bounds: Bounds = Bounds(),
    clock: Callable[[], float] = time.monotonic,
) -> Related:
    """What the other files of `tree` tell about the changes of `diff`, within `bounds`."""
    listed = tree.paths(bounds.listed + 1)
    if len(listed) > bounds.listed:
        return Related(note=f"{FALLBACK}: the repository has more than {bounds.listed:,} files")
    reader = _Reader(tree, bounds, clock)
    python = Modules(listed, reader.read)
    excerpts: list[Excerpt] = []
    for file in diff.files:
        if file.deleted or file.binary or not file.hunks or reader.spent:
            continue
        if file.path.endswith(".py"):
            excerpts += _python(file, python, listed, reader)
        elif _grammar(file.path) is not None:
            excerpts += _by_name(file, listed, reader)
    note = f"{PARTIAL}: {reader.spent}" if reader.spent else ""
    return Related(tuple(excerpts), note)


class _Reader:
    """The tree's files, read through `bounds`: past one, nothing more is read."""

    def __init__(self, tree: SourceTree, bounds: Bounds, clock: Callable[[], float]) -> None:
        self._tree = tree
        self._bounds = bounds
        self._clock = clock
        self._deadline = clock() + bounds.seconds
        self._texts: dict[str, str | None] = {}
        self._bytes = 0
        self.spent = ""
        """Which bound was reached; empty while none was."""

    def read(self, path: str) -> str | None:
        if path in self._texts:
            return self._texts[path]
        if not self.spent:
            if len(self._texts) >= self._bounds.files:
                self.spent = f"the search stops after {self._bounds.files:,} files"
            elif self._bytes >= self._bounds.bytes:
                self.spent = f"the search stops after {self._bounds.bytes:,} bytes"
            elif self._clock() > self._deadline:
                self.spent = f"the search stops after {self._bounds.seconds:g} s"
        if self.spent:
            return None
        text = self._tree.read(path)
        self._texts[path] = text
        self._bytes += len(text or "")
        return text


def _python(
    file: DiffFile, modules: Modules, listed: Sequence[str], reader: _Reader
) -> Iterator[Excerpt]:
    module = modules.at(file.path)
    if module is None:
        return
    touched: dict[Definition, tuple[int, int]] = {}
    scopes = module.scopes()
    for hunk in file.hunks:
        added = hunk.added() or [hunk.target_start]
        changes = (min(added), max(added))
        for chain in module.uses(frozenset(added)):
            found = modules.resolve(module, chain)
            if found is not None and found.path != file.path:
                yield _definition(found, modules, file.path, changes)
        for line in added:
            inner = [(d, o) for d, o in scopes if d.first <= line <= d.last and d.kind != "class"]
            if inner:
                scope, owner = min(inner, key=lambda pair: pair[0].last - pair[0].first)
                called = _called_as(module, scope, owner)
                if called is not None:
                    touched.setdefault(called, changes)
    if touched:
        yield from _callers(file.path, touched, modules, listed, reader)


def _called_as(module: Module, scope: Definition, owner: str | None) -> Definition | None:
    """What the callers of the changed function `scope` call: the class, for its
    constructor; nothing, for another special method (an operator's, called by no name)."""
    if not scope.name.startswith("__"):
        return scope
    if scope.name in ("__init__", "__new__", "__post_init__") and owner is not None:
        return module.definition(owner)
    return None


def _definition(
    found: Definition, modules: Modules, origin: str, changes: tuple[int, int]
) -> Excerpt:
    module = modules.at(found.path)
    lines = module.lines if module else []
    last = min(found.last, found.first + DEFINITION_LINES - 1, len(lines))
    return Excerpt(
        found.path,
        found.first,
        tuple(lines[found.first - 1 : last]),
        f"{found.kind} {found.name}, used by a change in {origin}",
        ExcerptKind.DEFINITION,
        origin,
        changes,
    )


def _callers(
    path: str,
    touched: dict[Definition, tuple[int, int]],
    modules: Modules,
    listed: Sequence[str],
    reader: _Reader,
) -> Iterator[Excerpt]:
    """The calls, in other files, of the functions `touched` (each with the changes in it)."""
    shown = {(d, kind): 0 for d in touched for kind in (ExcerptKind.CALLER, ExcerptKind.TEST)}
    names = {d.name for d in touched}
    # Where the name is not even written, the file is neither parsed nor walked.
    for other in sorted(listed, key=_tests_last):
        if other == path or not other.endswith(".py"):
            continue
        text = reader.read(other)
        if text is None or not any(name in text for name in names):
            continue
        user = modules.at(other, text)
        if user is None or not modules.imports_from(user, path):
            continue
        kind = ExcerptKind.TEST if _is_test(other) else ExcerptKind.CALLER
        cap = TESTS if kind is ExcerptKind.TEST else CALLERS
        places: set[tuple[int, int]] = set()
        # Only a call written with a touched name, or a name an import binds to one of them
        # (`import order_total as total_of`), is followed to its definition.
        aliases = {bound for bound, b in user.bindings.items() if b.name in names}
        for call in user.calls():
            if call.chain[-1] not in names and call.chain[0] not in aliases:
                continue
            for target, changes in touched.items():
                if shown[target, kind] >= cap or not _calls(modules, user, call, target):
                    continue
                excerpt = _caller(user, call, target, kind, path, changes)
                if (excerpt.first, excerpt.last) not in places:
                    places.add((excerpt.first, excerpt.last))
                    shown[target, kind] += 1
                    yield excerpt


def _calls(modules: Modules, user: Module, call: Call, target: Definition) -> bool:
    found = modules.resolve(user, call.chain)
    if found is not None:
        return found == target
    # `cart.total()` on an object: a method of that name, in a file that imports its module.
    return target.kind == "method" and len(call.chain) > 1 and call.chain[-1] == target.name


def _caller(
    user: Module,
    call: Call,
    target: Definition,
    kind: ExcerptKind,
    origin: str,
    changes: tuple[int, int],
) -> Excerpt:
    around = [d for d, _ in user.scopes() if d.first <= call.first and call.last <= d.last]
    limit = DEFINITION_LINES if kind is ExcerptKind.TEST else CALL_LINES
    if around:
        scope = min(around, key=lambda d: d.last - d.first)
        first, last, where = scope.first, scope.last, f"{scope.kind} {scope.name}"
    else:
        first, last, where = call.first, call.last, "module level"
    if last - first >= limit:  # too long whole: the lines around the call
        first, last = max(first, call.first - AROUND_CALL), min(last, call.last + AROUND_CALL)
    role = "tests" if kind is ExcerptKind.TEST else "calls"
    return Excerpt(
        user.path,
        first,
        tuple(user.lines[first - 1 : last]),
        f"{where} {role} {target.name}, changed in {origin}",
        kind,
        origin,
        changes,
    )


def _is_test(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("test", "tests", "testing") for p in parts[:-1])
    )


def _tests_last(path: str) -> tuple[bool, str]:
    return _is_test(path), path


def _by_name(file: DiffFile, listed: Sequence[str], reader: _Reader) -> Iterator[Excerpt]:
    text = reader.read(file.path)
    if text is None:
        return
    grammar = _grammar(file.path)
    others = [p for p in listed if p != file.path and _grammar(p) == grammar]
    for use in named_definitions(file, text, others, reader.read, DEFINITION_LINES):
        yield Excerpt(
            use.path,
            use.first,
            use.lines,
            f"{use.name}, used by a change in {file.path}",
            ExcerptKind.DEFINITION,
            file.path,
            use.changes,
        )


def _grammar(path: str) -> str | None:
    return LANGUAGES.get(posixpath.splitext(path)[1].lower())
