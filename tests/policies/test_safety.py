"""ProtectedPaths: which paths a patch may never touch."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policies.debate import DebatePolicy
from policies.safety import ALWAYS_PROTECTED, ProtectedPaths, is_safe_relative

DEFAULT = ProtectedPaths(DebatePolicy().protected_paths)


@pytest.mark.parametrize(
    ("path", "forbidden"),
    [
        # protected by the default globs
        (".github/workflows/ci.yml", True),
        (".github/workflows/a/b.yml", True),
        (".github/tiebreak.yml", True),
        # CI code outside the workflows, and what changes what a build fetches
        (".github/actions/setup/action.yml", True),
        (".github/actions/setup/scripts/install.sh", True),
        ("tools/deploy/action.yaml", True),
        ("action.yml", True),
        (".gitmodules", True),
        (".gitlab-ci.yml", True),
        (".circleci/config.yml", True),
        ("Jenkinsfile", True),
        (".devcontainer/devcontainer.json", True),
        (".pre-commit-config.yaml", True),
        (".github/dependabot.yml", True),
        ("renovate.json", True),
        # who must approve a change
        (".github/CODEOWNERS", True),
        ("docs/CODEOWNERS", True),
        # the same paths spelled indirectly are still protected
        ("./.github/workflows/ci.yml", True),
        (".github//workflows/ci.yml", True),
        (".github/workflows/./ci.yml", True),
        # never patchable, whatever the globs say
        ("../etc/passwd", True),
        ("src/../../etc/passwd", True),
        ("src/../.github/workflows/ci.yml", True),
        ("/abs/path", True),
        ("/etc/passwd", True),
        ("a\\b", True),
        ("..\\etc\\passwd", True),
        ("", True),
        ("src/app\x00.py", True),
        ("..", True),
        (".git/config", True),  # git's own directory, never a tracked file
        ("sub/.GIT/hooks/pre-commit", True),
        # ordinary files
        ("src/app.py", False),
        ("README.md", False),
        ("src/..hidden/file.py", False),  # dots inside a name are not a climb
        ("..config", False),
        (".gitignore", False),
        ("docs/.github.md", False),
        ("src/actions.yml", False),  # only a file named exactly action.yml is an action
        ("docs/gitmodules.md", False),
        # the default globs are anchored at the repository root, gitignore-style
        ("docs/.github/workflows/x", False),
        ("docs/.github/tiebreak.yml", False),
    ],
)
def test_default_protected_paths(path: str, forbidden: bool) -> None:
    assert (DEFAULT.forbids(path) is not None) is forbidden


def test_reason_names_a_protected_path() -> None:
    reason = DEFAULT.forbids(".github/workflows/ci.yml")

    assert reason is not None
    assert ".github/workflows/ci.yml" in reason
    assert "protected" in reason


@pytest.mark.parametrize("path", ["../etc/passwd", "/abs/path", "a\\b", ""])
def test_reason_for_an_unsafe_path_says_it_leaves_the_repository(path: str) -> None:
    reason = DEFAULT.forbids(path)

    assert reason is not None
    assert repr(path) in reason
    assert "inside the repository" in reason


def test_no_globs_still_refuses_unsafe_paths() -> None:
    nothing = ProtectedPaths([])

    assert nothing.forbids(".github/workflows/ci.yml") is None
    assert nothing.forbids("../etc/passwd") is not None
    assert nothing.forbids("/abs/path") is not None
    assert nothing.forbids("") is not None


@pytest.mark.parametrize(
    ("globs", "path", "forbidden"),
    [
        (["secrets/**"], "secrets/key.pem", True),
        (["secrets/**"], "src/secrets/key.pem", False),
        (["*.pem"], "deep/down/key.pem", True),  # a slash-free glob matches at any depth
        (["*.pem"], "key.pem.txt", False),
        (["/Makefile"], "Makefile", True),
        (["/Makefile"], "sub/Makefile", False),
        (["vendor/"], "vendor/lib.py", True),
    ],
)
def test_custom_globs_are_gitignore_style(globs: list[str], path: str, forbidden: bool) -> None:
    assert (ProtectedPaths(globs).forbids(path) is not None) is forbidden


@pytest.mark.parametrize(
    ("globs", "refusal"),
    [
        (["!.github/workflows/release.yml"], "negated"),
        ([".github/workflows/**", "!.github/workflows/release.yml"], "negated"),
        (["  !secrets/**"], "negated"),
        ([""], "empty"),
        (["secrets/**", "\t"], "empty"),
    ],
    ids=["negated", "negation-after-workflows", "negated-after-spaces", "empty", "blank"],
)
def test_negated_and_empty_globs_are_refused(globs: list[str], refusal: str) -> None:
    with pytest.raises(ValueError, match=refusal):
        ProtectedPaths(globs)


def test_a_configured_list_cannot_unprotect_the_workflows() -> None:
    configured = ProtectedPaths(DebatePolicy(protected_paths=("secrets/**",)).protected_paths)

    assert configured.globs[: len(ALWAYS_PROTECTED)] == ALWAYS_PROTECTED
    assert configured.forbids(".github/workflows/ci.yml") is not None
    assert configured.forbids(".github/tiebreak.yml") is not None
    assert configured.forbids("secrets/key.pem") is not None
    assert configured.forbids("src/app.py") is None


safe_segments = st.text(alphabet="abcxyz_-.0123", min_size=1, max_size=6).filter(
    lambda s: s not in {".", ".."}
)


@given(st.lists(safe_segments, min_size=1, max_size=5))
def test_anything_under_workflows_is_protected(segments: list[str]) -> None:
    path = "/".join([".github", "workflows", *segments])

    assert DEFAULT.forbids(path) is not None


@given(st.lists(safe_segments, min_size=1, max_size=5))
def test_any_path_climbing_out_is_refused(segments: list[str]) -> None:
    for position in range(len(segments) + 1):
        climbing = [*segments[:position], "..", *segments[position:]]
        assert not is_safe_relative("/".join(climbing))
        assert DEFAULT.forbids("/".join(climbing)) is not None


@given(st.lists(safe_segments, min_size=1, max_size=5))
def test_plain_relative_paths_are_safe(segments: list[str]) -> None:
    path = "/".join(segments)

    assert is_safe_relative(path)
    assert not is_safe_relative("/" + path)
