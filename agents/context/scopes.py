"""Where a changed line sits in its file: the enclosing function or class, found by a parser.

Python is read with the standard `ast` module, which also names the functions a changed line
calls, so a helper defined in the same file can be shown beside the change. Other languages
are read with tree-sitter's grammars (`tree-sitter-language-pack`, whose grammars ship in its
wheel: nothing is downloaded). A file no parser knows, or whose parse fails, gets a window of
:data:`WINDOW` lines either side of the change instead; where the parser gave up on a file it
knows (nested too deeply for Python's parser, or a parse the App stopped: see
`app.parsing`), the outline says why, for the agents to be told.

A file is parsed once into an :class:`Outline`, its scopes and the calls on each of its lines
found in one walk of the tree, which then answers for every changed line of it: a review of
many hunks pays for one parse of each file, not one per hunk.
"""

import ast
import posixpath
from bisect import bisect_right
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from tree_sitter import Node, Parser
from tree_sitter_language_pack import get_parser

from agents.context.python_nodes import walk

WINDOW = 20
"""Lines shown either side of a change that no parsed scope encloses."""

LANGUAGES = {
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".rb": "ruby",
    ".php": "php",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".swift": "swift",
    ".scala": "scala",
}
"""File extensions read with a tree-sitter grammar, and the grammar's name."""

_SCOPE_WORDS = ("function", "method", "class", "impl", "struct", "interface", "trait", "module")
"""Tree-sitter node types naming a scope contain one of these (`function_declaration`,
`method_definition`, `impl_item`, `class_specifier`, …)."""
_SCOPE_SUFFIXES = ("_definition", "_declaration", "_item", "_specifier", "_def")


@dataclass(frozen=True, slots=True)
class Scope:
    """Lines first..last (1-based, inclusive) of a file, and what they are."""

    first: int
    last: int
    what: str
    """For a reader: `function total`, `class Cart`, `lines 10-50`."""
    head: int = field(default=0, compare=False)
    """The last line of its signature, from `first` up to its body (the first line where the
    parser names no body); 0 for a window of lines, which has none. Derived from the lines,
    so no part of what makes two scopes the same."""


@dataclass(frozen=True, slots=True)
class Outline:
    """What one parse of a file tells: its scopes, and (Python) the names each line calls.

    A file is parsed once, however many of its lines are asked about; the answers are those
    of the whole file's tree."""

    lines: int
    """The file's lines, a last one without a newline counted."""
    scopes: tuple[Scope, ...] = ()
    """Every parsed scope, in the order the tree was walked (which settles ties)."""
    calls: Mapping[int, tuple[tuple[int, str], ...]] = field(default_factory=dict)
    """By line: the names called on it (Python only), each with its place in the walk."""
    defined: Mapping[str, Scope] = field(default_factory=dict)
    """The functions and classes by name, the last of a name winning (Python only)."""
    unparsed: str = ""
    """Why a parser that knows the file's language gave up on it (`nested too deeply to
    parse`); empty when it did not, or when no parser knows the language."""

    def enclosing(self, line: int) -> Scope:
        """The innermost function or class around `line`; a window of lines when no parsed
        scope holds it."""
        inner = [s for s in self.scopes if s.first <= line <= s.last]
        if inner:
            return min(inner, key=lambda s: s.last - s.first)
        first, end = max(1, line - WINDOW), min(self.lines, line + WINDOW)
        return Scope(first, end, f"lines {first}-{end}")

    def around(self, lines: list[int], *, added: bool) -> Iterator[tuple[Scope, list[int]]]:
        """The scopes a hunk's changed `lines` (ascending) sit in, each with its lines; windows
        of lines that meet are one. When the lines are `added`, a scope the hunk adds whole is
        in the diff already: only its first line is given, to the scope around it (for that
        one's signature), and none when no scope is around it."""
        window: tuple[Scope, list[int]] | None = None
        start = 0
        while start < len(lines):
            scope = self.enclosing(lines[start])
            end = bisect_right(lines, scope.last, lo=start)
            mine, start = lines[start:end], end
            if not scope.head:  # a window of lines: joined to the last one where they meet
                if window is not None and scope.first <= window[0].last + 1:
                    first = window[0].first
                    window = (Scope(first, scope.last, f"lines {first}-{scope.last}"), window[1])
                    window[1].extend(mine)
                    continue
                if window is not None:
                    yield window
                window = (scope, mine)
                continue
            if added and len(mine) == scope.last - scope.first + 1:
                parent = self._parent(scope)
                if parent is None:
                    continue
                scope, mine = parent, mine[:1]
            yield scope, mine
        if window is not None:
            yield window

    def _parent(self, scope: Scope) -> Scope | None:
        """The innermost parsed scope around `scope`, other than itself."""
        around = [
            s
            for s in self.scopes
            if s.first <= scope.first
            and scope.last <= s.last
            and (s.first, s.last)
            != (
                scope.first,
                scope.last,
            )
        ]
        return min(around, key=lambda s: s.last - s.first, default=None)

    def callees(self, lines: Collection[int]) -> list[Scope]:
        """The functions and classes defined in the file that `lines` call (Python only), in
        the order they are first called."""
        found = sorted(call for line in set(lines) for call in self.calls.get(line, ()))
        called = dict.fromkeys(name for _, name in found)
        return [self.defined[name] for name in called if name in self.defined]


def parsable(path: str) -> bool:
    """Whether a parser knows the language of the file at `path`."""
    return _is_python(path) or _language(path) is not None


def outline(path: str, text: str) -> Outline:
    """The outline of `text`, the file at `path`, from one parse (none for a file no parser
    knows or can read).

    A parse is not bounded in time: tree-sitter's C grammar takes minutes, and gigabytes, over
    30 KB of `x=>x=>…`. Where the file is untrusted, run this where it can be stopped
    (`app.parsing`)."""
    lines = text.count("\n") + 1
    if _is_python(path):
        try:
            return _python_outline(ast.parse(text), lines)
        except (SyntaxError, ValueError):  # a half-written file, or a NUL byte in it
            return Outline(lines)
        except RecursionError:  # `1+1+…`: the parser's own recursion limit
            return Outline(lines, unparsed="nested too deeply to parse")
        except MemoryError:  # `---…1`: the parser's stack, grown past its bound
            return Outline(lines, unparsed="too deep to parse in memory")
    language = _language(path)
    if language is None:
        return Outline(lines)
    root = _parser(language).parse(text.encode()).root_node
    return Outline(lines, tuple(_tree_sitter_scopes(root)))


def unparsed(text: str, why: str) -> Outline:
    """The outline of a file whose parse was given up, `why`: no scope, a window of lines
    around each change."""
    return Outline(text.count("\n") + 1, unparsed=why)


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):  # self.helper(), module.helper()
        return func.attr
    return None


def _is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def _language(path: str) -> str | None:
    return LANGUAGES.get(posixpath.splitext(path)[1].lower())


def _python_outline(tree: ast.Module, lines: int) -> Outline:
    scopes: list[Scope] = []
    calls: dict[int, list[tuple[int, str]]] = {}
    # One walk for both: the walk's order is the order callees are named in.
    for index, node in enumerate(walk(tree)):
        if isinstance(node, ast.Call):
            name = _called_name(node.func)
            if name:
                calls.setdefault(node.lineno, []).append((index, name))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            # Decorators belong with what they decorate.
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            # The body's first statement (its docstring, if any) ends the signature.
            head = max(node.lineno, node.body[0].lineno - 1)
            last = node.end_lineno or node.lineno
            scopes.append(Scope(first, last, f"{kind} {node.name}", head))
    return Outline(
        lines,
        tuple(scopes),
        {line: tuple(named) for line, named in calls.items()},
        {s.what.split(" ", 1)[1]: s for s in scopes},
    )


def _tree_sitter_scopes(root: Node) -> Iterator[Scope]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.start_point.row == node.end_point.row:
            continue  # nor is anything inside a one-line node a scope of several lines
        stack.extend(node.children)
        kind = node.type
        if not kind.endswith(_SCOPE_SUFFIXES):
            continue
        if not any(word in kind for word in _SCOPE_WORDS):
            continue
        name = node.child_by_field_name("name")
        label = kind.rsplit("_", 1)[0].replace("_", " ")
        if name is not None and name.text is not None:
            label += " " + name.text.decode(errors="replace")
        body = node.child_by_field_name("body")
        first = node.start_point.row + 1
        # The line the body opens on (`{`) ends the signature.
        head = first if body is None else max(first, body.start_point.row + 1)
        yield Scope(first, node.end_point.row + 1, label, head)


@cache
def _parser(language: str) -> Parser:
    # The pack's names are a Literal of every grammar it ships; ours come from LANGUAGES.
    name: Any = language
    parser: Parser = get_parser(name)
    return parser
