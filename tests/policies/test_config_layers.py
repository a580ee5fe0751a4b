"""layered_config: a repository's own config over its organisation's defaults."""

import pytest

from policies.config import RepoConfig, layered_config
from policies.config_file import ConfigProblem

ORG = "acme/.github:tiebreak.yml"


def layered(own: str | None, defaults: str | None) -> tuple[RepoConfig, list[ConfigProblem]]:
    return layered_config(own, defaults, ORG)


@pytest.mark.parametrize(
    ("defaults", "own", "option", "value"),
    [
        ("min_severity: major\n", None, "min_severity", "major"),
        ("min_severity: major\n", "", "min_severity", "major"),
        ("min_severity: major\n", "label: ours\n", "min_severity", "major"),
        ("min_severity: major\n", "min_severity: nit\n", "min_severity", "nit"),
        (
            "debate: {max_rounds: 3, arbitration: false}\n",
            "debate: {max_rounds: 4}\n",
            "debate.arbitration",
            False,
        ),
        (
            "debate: {max_rounds: 3, arbitration: false}\n",
            "debate: {max_rounds: 4}\n",
            "debate.max_rounds",
            4,
        ),
        (
            "paths: {exclude: ['*.lock']}\n",
            "paths: {exclude: ['vendor/**']}\n",
            "paths.exclude",
            ("vendor/**",),
        ),
        (
            "paths: {exclude: ['*.lock']}\n",
            "paths: {include: ['src/**']}\n",
            "paths.exclude",
            ("*.lock",),
        ),
        ("ignore_authors: [octocat]\n", "ignore_authors: []\n", "ignore_authors", ()),
        (
            "ignore: {labels: [wip]}\n",
            "ignore: {title_patterns: ['[WIP]*']}\n",
            "ignore.labels",
            ("wip",),
        ),
        (None, "min_severity: minor\n", "min_severity", "minor"),
        (None, None, "min_severity", "nit"),
    ],
    ids=[
        "no-own-file",
        "empty-own-file",
        "another-key",
        "scalar-replaced",
        "mapping-merged-kept",
        "mapping-merged-overridden",
        "list-replaced",
        "sibling-list-kept",
        "list-emptied",
        "section-merged",
        "no-defaults",
        "neither",
    ],
)
def test_the_own_file_overrides_the_defaults_key_by_key(
    defaults: str | None, own: str | None, option: str, value: object
) -> None:
    config, problems = layered(own, defaults)

    assert problems == []
    found: object = config
    for part in option.split("."):
        found = getattr(found, part)
    assert found == value


def test_broken_defaults_are_left_out_and_named() -> None:
    config, problems = layered("label: ours\n", "label: org\nmin_severity: high\n")

    assert config.label == "ours"
    assert config.min_severity == "nit"
    assert [(p.source, p.line) for p in problems] == [(ORG, 2)]
    assert problems[0].message.startswith("min_severity must be one of")


def test_a_broken_own_file_leaves_the_defaults_alone() -> None:
    config, problems = layered("label: ours\nrounds: 3\n", "label: org\nmin_severity: major\n")

    assert (config.label, config.min_severity) == ("org", "major")
    assert [(p.source, p.line) for p in problems] == [(None, 2)]


def test_an_override_that_breaks_the_merged_config_is_the_own_files_problem() -> None:
    defaults = "debate:\n  testers: 2\n  focus: [security, performance]\n"

    config, problems = layered("debate:\n  testers: 1\n", defaults)

    assert config.debate.testers == 2  # the defaults alone
    (problem,) = problems
    assert (problem.source, problem.line) == (None, 1)
    assert "focus names 2 focuses for 1 tester" in problem.message


def test_a_warning_of_the_defaults_is_named_with_their_file_and_line() -> None:
    config, problems = layered("label: ours\n", "ignore_authors:\n  - renovate\n")

    assert config.ignore_authors == ("renovate",)
    assert [(p.source, p.line, p.warning) for p in problems] == [(ORG, 2, True)]
    assert str(problems[0]).startswith(f"{ORG} line 2: warning: ignore_authors.0: 'renovate'")
