"""What a change adds that its base does not have: the modules of the files it creates, and
the names its added lines define. A test of that code fails at the base only because the
code is not there; :meth:`Additions.provide` says whether what a failure names as missing
is among them.

Read from the diff's text alone (no file is parsed), by the file's language:

* Python: a created file's module under each tail of its path (a test may import
  `src/shop/coupons.py` as `shop.coupons`); the names of a `def`, a `class` or an
  assignment on an added line.
* Go: a created file's package, its folder (`shop/coupons`, which an import path such as
  `example.com/shop/coupons` ends with); the names of a `func` (a method's too), a `type`, a
  `var` or a `const` on an added line.
* JavaScript and TypeScript: a created file's module, its path without its suffix
  (`src/coupons`, as a test's `require('../src/coupons')` is read; `src/coupons/index.js` as
  `src/coupons` too); the names of a `function`, a `class`, a `const`, `let` or `var`, an
  `export` of any of them, and `exports.x =` on an added line.

A name an added line defines that the base also had does no harm: the base's run would not
have missed it.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from agents.failures.failure import Absence, Missing
from agents.failures.node_test import SCRIPTS

_PYTHON = (
    re.compile(r"^\s*(?:async\s+)?def\s+(\w+)"),
    re.compile(r"^\s*class\s+(\w+)"),
    re.compile(r"^\s*(\w+)\s*(?::[^=]+)?=(?!=)"),
)
_GO = (
    re.compile(r"^func\s+(?:\([^)]*\)\s*)?(\w+)"),
    re.compile(r"^\s*(?:type|var|const)\s+(\w+)"),
)
_JAVASCRIPT = (
    re.compile(
        r"^\s*(?:export\s+(?:default\s+)?)?(?:async\s+)?"
        r"(?:function\s*\*?|class|const|let|var)\s+([\w$]+)"
    ),
    re.compile(r"^\s*(?:module\.)?exports\.([\w$]+)\s*="),
    re.compile(r"^\s*(?:async\s+)?([\w$]+)\s*\([^)]*\)\s*\{"),  # a method
)
DEFINITIONS: dict[str, tuple[re.Pattern[str], ...]] = {
    ".py": _PYTHON,
    ".pyi": _PYTHON,
    ".go": _GO,
    **dict.fromkeys(SCRIPTS, _JAVASCRIPT),
}
"""How an added line defines a name, by the suffix of its file."""
MODULES = (".py", ".pyi")
"""The suffixes of a created file that is a Python module."""


@dataclass(frozen=True, slots=True)
class Additions:
    """The modules and names a change adds."""

    modules: frozenset[str] = frozenset()
    """Each dotted name a created module may be imported under."""
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, created: Iterable[str], added: Iterable[tuple[str, str]]) -> "Additions":
        """The additions of a change that creates the files at `created` and adds the lines
        `added` (each with its file's path)."""
        modules = {name for path in created for name in _module_names(path)}
        names = set()
        patterns: dict[str, tuple[re.Pattern[str], ...]] = {}
        for path, line in added:
            if path not in patterns:
                patterns[path] = DEFINITIONS.get(PurePosixPath(path).suffix, ())
            for pattern in patterns[path]:
                if found := pattern.match(line):
                    names.add(found[1])
        return cls(frozenset(modules), frozenset(names))

    def provide(self, missing: Missing) -> bool:
        """Whether the change adds what `missing` names: a module it creates (or a package
        of one), or a name it defines (or a module it creates inside the one named)."""
        if missing.absence is Absence.MODULE:
            package = missing.name + "."
            return (
                missing.name in self.modules
                or any(m.startswith(package) for m in self.modules)
                or any(missing.name.endswith("/" + m) for m in self.modules)
            )
        within = f"{missing.within}.{missing.name}" if missing.within else None
        return missing.name in self.names or within in self.modules


def _module_names(path: str) -> list[str]:
    pure = PurePosixPath(path)
    if pure.suffix == ".go":
        return [str(pure.parent)] if str(pure.parent) != "." else []
    if pure.suffix in SCRIPTS:
        stem = str(pure.with_suffix(""))
        return [stem, str(pure.parent)] if pure.stem == "index" else [stem]
    if pure.suffix not in MODULES:
        return []
    parts = [*pure.parent.parts, pure.stem]
    if parts[-1] == "__init__":
        parts.pop()
    return [".".join(parts[i:]) for i in range(len(parts))]
