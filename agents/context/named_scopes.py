"""Definitions found by name, for languages whose imports Tiebreak does not follow.

A changed line of a Go, TypeScript, Rust… file writes names; those its own file does not
define are looked for among the functions, classes and types that tree-sitter outlines
(:func:`agents.context.scopes.outline`) in the repository's other files of the same language, the
name being the last word of a scope's label (`function total`). The first file found to
define a name wins: a guess, where Python's names are followed through their imports
(`agents.context.python_names`). A file that does not even write a name is not parsed.
"""

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from agents.context.scopes import Scope, outline
from agents.diff import DiffFile

_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
_KIND_WORDS = frozenset(
    ("function", "method", "class", "impl", "struct", "interface", "trait", "module", "enum")
)
"""Words of a scope's label that name its kind (an anonymous `function`), not the scope."""


@dataclass(frozen=True, slots=True)
class NamedDefinition:
    """The definition of `name`, lines `first`… of `path`, used by the changes `changes`."""

    name: str
    path: str
    first: int
    lines: tuple[str, ...]
    changes: tuple[int, int]


def named_definitions(
    file: DiffFile,
    text: str,
    others: Sequence[str],
    read: Callable[[str], str | None],
    max_lines: int,
) -> Iterator[NamedDefinition]:
    """The definitions, in the files `others`, of the names the changed lines of `file`
    (whose text is `text`) use, each shown by its first `max_lines` lines."""
    lines = text.splitlines()
    own = _names(outline(file.path, text).scopes)
    used: dict[tuple[int, int], list[str]] = {}
    for hunk in file.hunks:
        added = [n for n in hunk.added() if n <= len(lines)]
        if added:
            words = [w for n in added for w in _IDENTIFIER.findall(lines[n - 1])]
            used[min(added), max(added)] = [w for w in dict.fromkeys(words) if w not in own]
    wanted = {w for words in used.values() for w in words}
    found: dict[str, tuple[str, int, tuple[str, ...]]] = {}
    for other in others:
        missing = wanted - found.keys()
        source = read(other) if missing else None
        if source is None or not any(w in source for w in missing):
            continue
        other_lines = source.splitlines()
        for name, scope in _names(outline(other, source).scopes).items():
            if name in missing and name not in found:
                last = min(scope.last, scope.first + max_lines - 1)
                found[name] = (other, scope.first, tuple(other_lines[scope.first - 1 : last]))
    for changes, words in used.items():
        for word in words:
            if word in found:
                yield NamedDefinition(word, *found[word], changes)


def _names(scopes: Sequence[Scope]) -> dict[str, Scope]:
    named: dict[str, Scope] = {}
    for scope in scopes:
        words = scope.what.split(" ")
        if len(words) > 1 and words[-1] not in _KIND_WORDS:
            named.setdefault(words[-1], scope)
    return named
