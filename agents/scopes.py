"""Where a changed line sits in its file: the enclosing function or class, found by a parser.

Python is read with the standard `ast` module, which also names the functions a changed line
calls, so a helper defined in the same file can be shown beside the change. Other languages
are read with tree-sitter's grammars (`tree-sitter-language-pack`, whose grammars ship in its
wheel: nothing is downloaded). A file no parser knows, or whose parse fails, gets a window of
:data:`WINDOW` lines either side of the change instead.
"""

import ast
import posixpath
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from tree_sitter import Node, Parser
from tree_sitter_language_pack import get_parser

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


def enclosing(path: str, text: str, line: int) -> Scope:
    """The innermost function or class around `line` of `text`; a window of lines when no
    parsed scope holds it."""
    scopes = _scopes(path, text)
    inner = [s for s in scopes if s.first <= line <= s.last]
    if inner:
        return min(inner, key=lambda s: s.last - s.first)
    last = text.count("\n") + 1
    first, end = max(1, line - WINDOW), min(last, line + WINDOW)
    return Scope(first, end, f"lines {first}-{end}")


def callees(path: str, text: str, lines: Collection[int]) -> list[Scope]:
    """The functions and classes defined in the file that `lines` call (Python only), in the
    order they are first called."""
    tree = _python(path, text)
    if tree is None:
        return []
    called: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno in lines:
            name = _called_name(node.func)
            if name and name not in called:
                called.append(name)
    defined = {s.what.split(" ", 1)[1]: s for s in _python_scopes(tree)}
    return [defined[name] for name in called if name in defined]


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):  # self.helper(), module.helper()
        return func.attr
    return None


def _scopes(path: str, text: str) -> list[Scope]:
    tree = _python(path, text)
    if tree is not None:
        return list(_python_scopes(tree))
    language = LANGUAGES.get(posixpath.splitext(path)[1].lower())
    if language is None:
        return []
    root = _parser(language).parse(text.encode()).root_node
    return list(_tree_sitter_scopes(root))


def _python(path: str, text: str) -> ast.Module | None:
    if not path.endswith((".py", ".pyi")):
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):  # a half-written file, or a NUL byte in it
        return None


def _python_scopes(tree: ast.Module) -> Iterator[Scope]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            # Decorators belong with what they decorate.
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            yield Scope(first, node.end_lineno or node.lineno, f"{kind} {node.name}")


def _tree_sitter_scopes(root: Node) -> Iterator[Scope]:
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        kind = node.type
        if node.start_point.row == node.end_point.row or not kind.endswith(_SCOPE_SUFFIXES):
            continue
        if not any(word in kind for word in _SCOPE_WORDS):
            continue
        name = node.child_by_field_name("name")
        label = kind.rsplit("_", 1)[0].replace("_", " ")
        if name is not None and name.text is not None:
            label += " " + name.text.decode(errors="replace")
        yield Scope(node.start_point.row + 1, node.end_point.row + 1, label)


@cache
def _parser(language: str) -> Parser:
    # The pack's names are a Literal of every grammar it ships; ours come from LANGUAGES.
    name: Any = language
    parser: Parser = get_parser(name)
    return parser
