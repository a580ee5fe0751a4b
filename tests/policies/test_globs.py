"""Globs from a repository's config: what they match, whatever their shape, without stalling."""

import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pathspec import GitIgnoreSpec

from policies.config import Paths, RepoConfig, parse_config
from policies.guidance import Guidance
from policies.safety import ProtectedPaths

HOSTILE = "*a" * 8 + "b"
"""Eight wildcards, as many as a glob may have, each of which a backtracking matcher tries at
every `a` of a path."""
LONG = "a" * 200
"""A name made of nothing but `a`s, which HOSTILE never matches (it ends in `b`)."""

HOSTILE_CONFIG = f"""\
paths:
  include: ["{HOSTILE}", "src/**"]
  exclude: ["{HOSTILE}"]
path_instructions:
  - path: "{HOSTILE}"
    instructions: HOSTILE RULE
debate:
  protected_paths: ["{HOSTILE}"]
"""


# Not a measure: matching in linear time answers each of these in well under a millisecond,
# backtracking would take longer than anyone waits (eleven seconds at nine `*a`s and forty
# letters; hours at eight and two hundred). The deadline only turns a stall into a failure.
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("path", "matched"),
    [
        (f"{LONG}.py", False),
        (f"src/{LONG}.py", False),
        (f"deep/down/{LONG}", False),
        (f"{LONG}b", True),
        (f"deep/down/{LONG}b", True),
    ],
)
def test_a_config_s_hostile_globs_answer_without_stalling(path: str, matched: bool) -> None:
    config, problems = parse_config(HOSTILE_CONFIG)
    guidance = Guidance.of("", config.path_instructions, {})

    assert problems == []
    assert config.path_filter().reviews(path) is (path.startswith("src/") and not matched)
    assert ("HOSTILE RULE" in guidance.for_paths([path])) is matched
    assert (ProtectedPaths(config.debate.protected_paths).forbids(path) is not None) is matched


def test_without_re2_tiebreak_fails_to_read_a_config_rather_than_backtrack() -> None:
    # A server without google-re2 installed, as a fresh process sees it.
    script = textwrap.dedent(
        """
        import sys
        sys.modules["re2"] = None
        from policies.config import Paths, RepoConfig, parse_config
        print(parse_config("paths:\\n  exclude: ['*.lock']\\n"))
        """
    )

    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )

    assert run.returncode != 0, "a config was read without RE2"
    assert "ModuleNotFoundError" in run.stderr
    assert "re2" in run.stderr


GLOB_PARTS = ["a", "b", ".", "/", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "\\*", " ", "#", "!"]


def _glob(parts: list[str]) -> str:
    return "".join(parts)


globs = (
    st.lists(st.sampled_from(GLOB_PARTS), min_size=1, max_size=6)
    .map(_glob)
    .filter(lambda g: g.strip() != "" and not g.lstrip().startswith("!"))
)
paths = st.text(alphabet="ab./ #!*?[]", min_size=1, max_size=12).map(lambda p: p.strip("/"))


@settings(max_examples=300, deadline=None)
@given(st.lists(globs, min_size=1, max_size=4), st.lists(paths, min_size=1, max_size=8))
def test_globs_match_as_gitignore_s_reference_matcher_does(
    patterns: list[str], candidates: list[str]
) -> None:
    # pathspec's backtracking backend is the reference for gitignore's rules; RE2 must give
    # every answer it gives, on every glob a config may hold.
    reference = GitIgnoreSpec.from_lines(patterns, backend="simple")
    included = RepoConfig(paths=Paths(include=tuple(patterns))).path_filter()

    for path in filter(None, candidates):
        assert included.reviews(path) is reference.match_file(path), path
