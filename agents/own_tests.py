"""The pull request's own tests: which of its files are tests, and what one showed run at the
head.

A coder who answers a proven finding `intended` may cite a test the pull request adds or
changes, as asserting the new behaviour (`agents.debate.intent_rules`). Such a test is the
project's, at the head as the pull request has it: it is run there, unchanged (no file is
written), and it backs the intent only if it passes (`agents.verification.OwnTestRun`).
Which files are tests follows the usual conventions of their language: for Python
`test_*.py` and `*_test.py` (under a tests folder or beside the code), for Go `*_test.go`,
for JavaScript and TypeScript `*.test.*` and `*.spec.*` or a file under `__tests__`.
"""

from pathlib import PurePosixPath

_SCRIPT_SUFFIXES = frozenset({".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs"})


def is_test_file(path: str) -> bool:
    """Whether `path` is a test file by its language's conventions."""
    name = PurePosixPath(path)
    stem, suffix = name.stem, name.suffix
    if suffix == ".py":
        return stem.startswith("test_") or stem.endswith("_test")
    if suffix == ".go":
        return stem.endswith("_test")
    if suffix in _SCRIPT_SUFFIXES:
        return stem.endswith((".test", ".spec")) or "__tests__" in name.parts
    return False
