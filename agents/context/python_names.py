"""Python names followed across a repository's files through their imports, with `ast`.

A module's imports bind names to other modules (`import a.b as z`, `from m import n as k`,
relative imports resolved from the file's own directory); a name one file uses is followed
through them to its definition — a function, a class, a method of one, or an assignment at
a module's top level — hopping through a package's `__init__` re-exports and `import *` at
most :data:`MAX_HOPS` times. A module is found by its name: a file is named from the first
directory above it that is not a package (`src/attr/_make.py` is `attr._make`), and by its
whole path too (`tests/helpers.py` is also `tests.helpers`), as a rootdir on `sys.path` would
import it.

Each file is read and parsed at most once, through the reader it is given; one that cannot
be read or parsed (too large, Python 2, half-written) simply resolves nothing.
"""

import ast
import posixpath
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from agents.context.python_nodes import (
    assigned,
    child_statements,
    dotted_name,
    statements,
    top_level,
    walk,
)

MAX_HOPS = 3
"""Re-exports followed from a name to its definition: `pkg/__init__.py` importing it from
`pkg/core.py` is one hop."""

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True, slots=True)
class Binding:
    """What an import binds a name to: a module, or a name in one (`name`)."""

    module: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Definition:
    """Where a name is defined: lines first..last of `path` (decorators included)."""

    path: str
    name: str
    first: int
    last: int
    kind: str
    """`function`, `class`, `method` or `assignment`."""


@dataclass(frozen=True, slots=True)
class Call:
    """A call in a module: the dotted name called (`["cart", "total"]`), on lines first..last."""

    chain: tuple[str, ...]
    first: int
    last: int


class Module:
    """One parsed Python file: what its imports bind, what it defines at its top level."""

    def __init__(self, path: str, name: str, text: str, tree: ast.Module) -> None:
        self.path = path
        self.name = name
        self.lines = text.splitlines()
        self.tree = tree
        self.bindings: dict[str, Binding] = {}
        self.stars: list[str] = []
        self.defined: dict[str, Definition] = {}
        self._classes: dict[str, ast.ClassDef] = {}
        self._nodes: list[ast.AST] | None = None
        self._scopes: list[tuple[Definition, str | None]] | None = None
        self._loads: dict[int, list[tuple[int, tuple[str, ...]]]] | None = None

    def definition(self, name: str) -> Definition | None:
        return self.defined.get(name)

    def member(self, owner: Definition, name: str) -> Definition | None:
        """The method `name` of the class `owner` defined here, if it has one."""
        node = self._classes.get(owner.name) if owner.path == self.path else None
        for item in node.body if node else ():
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == name:
                return _definition(self.path, item, "method")
        return None

    def uses(self, lines: frozenset[int]) -> list[tuple[str, ...]]:
        """The dotted names loaded on `lines`, each once, in the order they appear."""
        if self._loads is None:
            self._loads = {}
            for node in self.nodes():
                if not isinstance(node, ast.Name | ast.Attribute):
                    continue
                if isinstance(node.ctx, ast.Load) and (parts := dotted_name(node)):
                    self._loads.setdefault(node.lineno, []).append((node.col_offset, parts))
        found = sorted((n, *use) for n in lines for use in self._loads.get(n, ()))
        return list(dict.fromkeys(chain for _, _, chain in found))

    def calls(self) -> Iterator[Call]:
        """Every call of a dotted name in the file."""
        for node in self.nodes():
            if isinstance(node, ast.Call) and (chain := dotted_name(node.func)):
                yield Call(chain, node.lineno, node.end_lineno or node.lineno)

    def nodes(self) -> list[ast.AST]:
        """Every node of the file, walked once for all the questions asked of it."""
        if self._nodes is None:
            self._nodes = walk(self.tree)
        return self._nodes

    def scopes(self) -> list[tuple[Definition, str | None]]:
        """Every function and class of the file, with the class a method is defined in."""
        if self._scopes is not None:
            return self._scopes
        found: list[tuple[Definition, str | None]] = []
        # Functions and classes are statements: the expressions need no walk.
        stack: list[tuple[ast.AST, str | None]] = [(self.tree, None)]
        while stack:
            node, owner = stack.pop()
            for child in child_statements(node):
                if isinstance(child, ast.ClassDef):
                    found.append((_definition(self.path, child, "class"), owner))
                    stack.append((child, child.name))
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    kind = "method" if owner else "function"
                    found.append((_definition(self.path, child, kind), owner))
                    stack.append((child, None))
                else:
                    stack.append((child, owner))
        self._scopes = found
        return found

    def bind(self, relative: Callable[[int, str | None], str | None]) -> None:
        """Index what the file's imports bind and what it defines; `relative` names the
        module a relative import (its level, its module) reaches."""
        # Breadth first: a module's top-level imports and definitions win over a function's.
        for node in statements(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.bindings.setdefault(alias.asname, Binding(alias.name))
                    else:  # `import a.b` binds `a`, through which `a.b` is reached
                        head = alias.name.split(".", 1)[0]
                        self.bindings.setdefault(head, Binding(head))
            elif isinstance(node, ast.ImportFrom):
                source = relative(node.level, node.module) if node.level else node.module
                if source is None:
                    continue  # a relative import from outside the tree
                for alias in node.names:
                    if alias.name == "*":
                        self.stars.append(source)
                    else:
                        bound = alias.asname or alias.name
                        self.bindings.setdefault(bound, Binding(source, alias.name))
        for statement in top_level(self.tree.body):
            if isinstance(statement, _DEFINITIONS):
                kind = "class" if isinstance(statement, ast.ClassDef) else "function"
                self.defined[statement.name] = _definition(self.path, statement, kind)
                if isinstance(statement, ast.ClassDef):
                    self._classes[statement.name] = statement
            for target in assigned(statement):
                self.defined.setdefault(target, _definition(self.path, statement, "assignment"))


class Modules:
    """The Python modules of a tree, found by name, each read and parsed once on first use."""

    def __init__(self, paths: Iterable[str], read: Callable[[str], str | None]) -> None:
        python = [p for p in paths if p.endswith(".py")]
        self._read = read
        self._paths = set(python)
        self._by_name: dict[str, str] = {}
        self._name_of: dict[str, str] = {}
        packages = {posixpath.dirname(p) for p in python if p.endswith("/__init__.py")}
        for path in python:
            named = _package_name(path, packages)
            self._name_of[path] = named
            self._by_name.setdefault(named, path)
        for path in python:
            self._by_name.setdefault(_dotted(path), path)
        self._parsed: dict[str, Module | None] = {}

    def at(self, path: str, text: str | None = None) -> Module | None:
        """The module in the file at `path` (whose `text` may already have been read); None
        when it is not one that parses."""
        if path not in self._parsed:
            self._parsed[path] = self._parse(path, text)
        return self._parsed[path]

    def named(self, name: str) -> Module | None:
        path = self._by_name.get(name)
        return None if path is None else self.at(path)

    def is_module(self, name: str) -> bool:
        return name in self._by_name

    def definition(self, module: str, name: str, hops: int = 0) -> Definition | None:
        """Where `name`, as `module` has it, is defined: in the module, or where the module
        imports it from."""
        found = self.named(module)
        if found is None:
            return None
        if (own := found.definition(name)) is not None:
            return own
        if hops >= MAX_HOPS:
            return None
        binding = found.bindings.get(name)
        if binding is not None:
            return self._bound(binding, hops + 1)
        for star in found.stars:
            if (starred := self.definition(star, name, hops + 1)) is not None:
                return starred
        return None

    def resolve(self, user: Module, chain: tuple[str, ...]) -> Definition | None:
        """The definition, in another module, of the dotted name `chain` as `user` uses it."""
        head, rest = chain[0], list(chain[1:])
        if head in user.defined:
            return None  # the file's own
        binding = user.bindings.get(head)
        if binding is None:
            for star in user.stars:
                if (starred := self.definition(star, head)) is not None:
                    return self._member(starred, rest)
            return None
        if binding.name is not None and not self.is_module(f"{binding.module}.{binding.name}"):
            found = self._bound(binding, 0)
            return None if found is None else self._member(found, rest)
        module = binding.module if binding.name is None else f"{binding.module}.{binding.name}"
        while rest and self.is_module(f"{module}.{rest[0]}"):
            module += "." + rest.pop(0)
        if not rest:
            return None  # a module, not a definition
        found = self.definition(module, rest.pop(0))
        return None if found is None else self._member(found, rest)

    def imports_from(self, user: Module, path: str) -> bool:
        """Whether `user` imports anything defined in the file at `path`, or the module."""
        target = self._name_of.get(path)
        for binding in user.bindings.values():
            if binding.module == target or f"{binding.module}.{binding.name}" == target:
                return True
            if binding.name is not None:
                found = self._bound(binding, 0)
                if found is not None and found.path == path:
                    return True
        return False

    def _bound(self, binding: Binding, hops: int) -> Definition | None:
        if binding.name is None or self.is_module(f"{binding.module}.{binding.name}"):
            return None
        return self.definition(binding.module, binding.name, hops)

    def _member(self, found: Definition, rest: list[str]) -> Definition | None:
        """`found`, or its method `rest[0]` when the use goes on into a class."""
        if not rest or found.kind != "class":
            return found
        module = self.at(found.path)
        method = module.member(found, rest[0]) if module else None
        return method or found

    def _parse(self, path: str, text: str | None) -> Module | None:
        if path not in self._paths:
            return None
        text = self._read(path) if text is None else text
        if text is None:
            return None
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # Python 2, a NUL byte, or nested past the parser's limits: nothing to follow.
            return None
        module = Module(path, self._name_of[path], text, tree)
        module.bind(lambda level, name: self._relative(path, level, name))
        return module

    def _relative(self, path: str, level: int, module: str | None) -> str | None:
        """The name of the module `from {'.' * level}{module} import …` names in `path`."""
        base = posixpath.dirname(path)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        target = posixpath.join(base, *module.split(".")) if module else base
        for candidate in (f"{target}.py", f"{target}/__init__.py"):
            if candidate in self._paths:
                return self._name_of[candidate]
        return None


def _package_name(path: str, packages: set[str]) -> str:
    """The module's name from the highest package above it: `src/attr/_make.py` is
    `attr._make` when `src/attr` is a package and `src` is not."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
        top = len(parts)
    else:
        top = len(parts) - 1
    while top > 0 and "/".join(parts[:top]) in packages:
        top -= 1
    return ".".join(parts[top:]) or parts[-1]


def _dotted(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _definition(path: str, node: ast.stmt, kind: str) -> Definition:
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    name = getattr(node, "name", None) or (assigned(node) or [""])[0]
    return Definition(path, name, first, node.end_lineno or node.lineno, kind)
