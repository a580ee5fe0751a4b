"""The config's `ignore` filters: which pull requests get no automatic review, and why."""

import pytest

from policies.config import parse_config
from policies.ignore import PullFacts

PULL = PullFacts(
    author="octocat",
    base_branch="main",
    head_branch="feature/login",
    title="Add a login page",
    labels=("enhancement",),
)


def declined(config: str, **pull: str | tuple[str, ...]) -> str | None:
    parsed, problems = parse_config(config)
    assert problems == []
    facts = PullFacts(**{**PULL.__dict__, **pull})
    return parsed.declines("opened", facts)


@pytest.mark.parametrize(
    ("config", "pull", "why"),
    [
        ("", {}, None),
        ("ignore:\n  base_branches: [release/**]\n", {"base_branch": "release/1.2"}, "into"),
        ("ignore:\n  base_branches: [release/**]\n", {}, None),
        ("ignore:\n  base_branches: [gh-pages]\n", {"base_branch": "gh-pages"}, "into"),
        (
            "ignore:\n  head_branches: [dependabot/**]\n",
            {"head_branch": "dependabot/npm/x"},
            "from",
        ),
        ("ignore:\n  head_branches: ['wip/*']\n", {"head_branch": "wip/try"}, "from"),
        ("ignore:\n  head_branches: ['wip/*']\n", {}, None),
        ("ignore:\n  title_patterns: ['[WIP]*']\n", {"title": "[wip] Add login"}, "titles"),
        ("ignore:\n  title_patterns: ['[WIP]*']\n", {"title": "W Add login"}, None),
        ("ignore:\n  title_patterns: ['*do not review*']\n", {"title": "x DO NOT REVIEW"}, "tit"),
        ("ignore:\n  title_patterns: ['Draft?']\n", {"title": "Drafts"}, "titles"),
        ("ignore:\n  title_patterns: ['Draft?']\n", {"title": "Drafts of it"}, None),
        ("ignore:\n  labels: [no-review]\n", {"labels": ("bug", "No-Review")}, "labelled"),
        ("ignore:\n  labels: [no-review]\n", {"labels": ("no-review-please",)}, None),
    ],
    ids=[
        "nothing-ignored",
        "base-glob",
        "base-glob-elsewhere",
        "base-name",
        "head-glob",
        "head-one-level",
        "head-elsewhere",
        "title-brackets-are-literal-case-insensitive",
        "title-not-matching",
        "title-anywhere",
        "title-one-character",
        "title-whole",
        "label-ignoring-case",
        "label-exact",
    ],
)
def test_an_ignore_filter_declines_the_pull_requests_it_matches(
    config: str, pull: dict[str, str | tuple[str, ...]], why: str | None
) -> None:
    said = declined(config, **pull)

    assert said is None if why is None else why in (said or ""), said


def test_a_decline_names_what_matched() -> None:
    config = "ignore:\n  title_patterns: ['chore(deps)*']\n  labels: [skip-review]\n"

    assert declined(config, title="chore(deps): bump x") == (
        "the config ignores titles like 'chore(deps)*'"
    )
    assert declined(config, labels=("Skip-Review",)) == (
        "the config ignores pull requests labelled 'Skip-Review'"
    )
    assert declined("ignore:\n  base_branches: [stable]\n", base_branch="stable") == (
        "the config ignores pull requests into stable"
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("ignore:\n  title_patterns: ['']\n", "ignore.title_patterns: a pattern may not be empty"),
        ("ignore:\n  title_patterns: '[WIP]*'\n", "ignore.title_patterns must be a list of title"),
        ("ignore:\n  base_branches: ['!main']\n", "ignore.base_branches.0: '!main': negated"),
        ("ignore:\n  labels: ['']\n", "ignore.labels.0 must be at least 1 character long"),
        ("ignore:\n  branches: [main]\n", "ignore.branches is not a Tiebreak option; did you"),
        ("ignore: [main]\n", "ignore must be a mapping of options"),
    ],
)
def test_a_bad_ignore_filter_is_a_problem_of_the_file(text: str, said: str) -> None:
    _, problems = parse_config(text)

    assert [p.message[: len(said)] for p in problems] == [said]
