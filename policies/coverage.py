"""Which changed files a review reaches first, so that a ceiling too small for the whole diff
is spent where a bug costs most.

A file's rank is its kind, then its changed lines, most first:

1. `sensitive` code: a path naming authentication, authorisation, secrets, cryptography,
   payments or database migrations (`auth`, `login`, `permission`, `security`, `secret`,
   `crypto`, `password`, `token`, `session`, `payment`, `billing`, `migration`… as a word of
   any directory or file name);
2. `code`: every other file not below;
3. `tests`: a path under `test/`, `tests/`, `spec/`, `__tests__/`, or named `test_*`, `*_test.*`,
   `*.test.*`, `*.spec.*`, `conftest.py`;
4. `docs`: Markdown, reStructuredText, AsciiDoc and plain text, anything under `docs/` or
   `doc/`, a `LICENSE` or `CHANGELOG`;
5. `generated`: lock files (`uv.lock`, `package-lock.json`, `Cargo.lock`, `go.sum`…),
   minified or mapped bundles, snapshots, protobuf output, `vendor/`, `node_modules/`, `dist/`.

The first kind that matches wins (a test of the login code is a test). Ties keep the diff's
order. The rank says where a review starts, never what it leaves out: every file is reviewed
when the ceiling allows.
"""

import re
from enum import IntEnum
from typing import NamedTuple

from policies.globs import compiled


class FileKind(IntEnum):
    """What a changed file is, in the order a review reaches it."""

    SENSITIVE = 0
    CODE = 1
    TESTS = 2
    DOCS = 3
    GENERATED = 4

    @property
    def label(self) -> str:
        return self.name.lower()


_GENERATED = compiled(
    (
        "uv.lock",
        "poetry.lock",
        "Pipfile.lock",
        "pdm.lock",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "Cargo.lock",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
        "mix.lock",
        "flake.lock",
        "*.min.js",
        "*.min.css",
        "*.map",
        "*.snap",
        "__snapshots__/",
        "*_pb2.py",
        "*_pb2.pyi",
        "*.pb.go",
        "*.generated.*",
        "vendor/",
        "node_modules/",
        "dist/",
    )
)
_DOCS = compiled(
    (
        "*.md",
        "*.markdown",
        "*.rst",
        "*.adoc",
        "*.txt",
        "docs/",
        "doc/",
        "LICENSE*",
        "CHANGELOG*",
    )
)
_TESTS = compiled(
    (
        "test/",
        "tests/",
        "spec/",
        "__tests__/",
        "test_*",
        "*_test.*",
        "*.test.*",
        "*.spec.*",
        "conftest.py",
    )
)
_SENSITIVE_WORDS = (
    "auth",
    "authn",
    "authz",
    "authentication",
    "authorization",
    "authorisation",
    "login",
    "oauth",
    "permission",
    "permissions",
    "acl",
    "security",
    "secret",
    "secrets",
    "crypto",
    "cryptography",
    "password",
    "passwords",
    "token",
    "tokens",
    "session",
    "sessions",
    "payment",
    "payments",
    "billing",
    "migration",
    "migrations",
    "sanitize",
    "sanitizer",
)
_WORD = re.compile(r"[a-z0-9]+")
"""Words of a path: `AuthService.java` and `user_auth.py` both hold `auth`."""
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def kind_of(path: str) -> FileKind:
    """The kind of the file at `path` (a repository-relative path, as a diff names it)."""
    if _GENERATED.match(path):
        return FileKind.GENERATED
    if _DOCS.match(path):
        return FileKind.DOCS
    if _TESTS.match(path):
        return FileKind.TESTS
    words = set(_WORD.findall(_CAMEL.sub("_", path).lower()))
    if words.intersection(_SENSITIVE_WORDS):
        return FileKind.SENSITIVE
    return FileKind.CODE


class Rank(NamedTuple):
    """A file's place in a review: lower first."""

    kind: FileKind
    fewer_lines: int
    """The changed lines, negated: more changed lines come first."""


def rank(path: str, changed_lines: int) -> Rank:
    return Rank(kind_of(path), -changed_lines)
