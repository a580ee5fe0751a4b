"""Walks of a Python module's tree that `agents.context.python_names` asks its questions with,
and `agents.context.scopes` finds a file's scopes with: every node once, breadth first,
without :func:`ast.walk`'s generator per node; the statements alone (where functions, classes
and imports are); a dotted name as its parts."""

import ast
from collections.abc import Iterator


def walk(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree` in :func:`ast.walk`'s order, breadth first, at twice its speed:
    without its generators for each node, which cost more than the parse on a large file."""
    nodes = [tree]
    for node in nodes:  # the list grows behind the loop: a queue that keeps what it served
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                nodes.append(value)
            elif isinstance(value, list):
                nodes += [item for item in value if isinstance(item, ast.AST)]
    return nodes


BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def child_statements(node: ast.AST) -> list[ast.AST]:
    """The statements directly inside `node` (an `except` or a `case` counts as one)."""
    return [item for block in BLOCKS for item in getattr(node, block, ()) or ()
            if isinstance(item, ast.stmt | ast.excepthandler | ast.match_case)]  # fmt: skip


def statements(tree: ast.Module) -> list[ast.AST]:
    """Every statement of `tree`, breadth first."""
    found: list[ast.AST] = [tree]
    for node in found:
        found += child_statements(node)
    return found[1:]


def dotted_name(node: ast.expr) -> tuple[str, ...]:
    """`a.b.c` as ("a", "b", "c"); empty for anything else (a call's result, a subscript)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ()
    return (node.id, *reversed(parts))


def top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's statements, those inside its top-level `if`s and `try`s too (where a
    fallback definition or an optional import often lives)."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If | ast.Try):
            yield from top_level(statement.body)
            yield from top_level(statement.orelse)
            if isinstance(statement, ast.Try):
                for handler in statement.handlers:
                    yield from top_level(handler.body)


def assigned(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.Assign):
        return [t.id for t in statement.targets if isinstance(t, ast.Name)]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []
