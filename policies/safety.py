"""Which paths a patch may touch.

Protected paths are gitignore-style globs (`.github/workflows/**`). A path that is absolute,
climbs out of the repository (`..`), reaches into `.git` or is empty is never patchable,
whatever the globs say:
the diff comes from an untrusted change and its paths are untrusted too.
"""

import posixpath
from collections.abc import Iterable

from policies.globs import compiled, plain_globs

ALWAYS_PROTECTED = (
    # What runs in CI with the repository's secrets: GitHub's workflows and the actions they
    # use (an `action.yml` anywhere is a composite or JavaScript action), other CI services'
    # definitions, and the containers and hooks CI runs.
    ".github/workflows/**",
    ".github/actions/**",
    "action.yml",
    "action.yaml",
    ".gitlab-ci.yml",
    ".circleci/**",
    ".travis.yml",
    "azure-pipelines.yml",
    ".buildkite/**",
    "Jenkinsfile",
    "bitbucket-pipelines.yml",
    ".drone.yml",
    ".devcontainer/**",
    ".pre-commit-config.yaml",
    # What changes what a build fetches: submodules, and the bots that update dependencies.
    ".gitmodules",
    ".github/dependabot.yml",
    ".github/dependabot.yaml",
    "renovate.json",
    "renovate.json5",
    ".renovaterc",
    ".renovaterc.json",
    # Who must approve a change, and Tiebreak's own rules.
    "CODEOWNERS",
    ".github/tiebreak.yml",
)
"""Paths no patch touches whatever a config says: everything that runs in CI with the
repository's secrets or changes what is fetched, who must approve a change, and Tiebreak's own
rules. A glob without a `/` (`action.yml`) matches at any depth; the others are anchored at the
repository's root, as in a `.gitignore`."""


class ProtectedPaths:
    """A set of globs naming paths that no patch may change."""

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs = tuple(plain_globs(tuple(globs)))
        self._matched = compiled(self.globs)

    def forbids(self, path: str) -> str | None:
        """The reason `path` may not be patched, or None if it may."""
        if not is_safe_relative(path):
            return f"{path!r} is not a plain path inside the repository"
        if self._matched.match(posixpath.normpath(path)):
            return f"{path} is a protected path"
        return None


def is_safe_relative(path: str) -> bool:
    """Whether `path` is a non-empty relative path that stays inside the repository: it
    neither climbs out (`..`) nor reaches into git's own `.git` (which git itself never
    tracks, in any case, and where a remote's credentials may be kept)."""
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return False
    parts = path.split("/")
    return ".." not in parts and ".git" not in (part.casefold() for part in parts)
