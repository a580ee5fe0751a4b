"""What parse_config says is wrong with a config file: sentences, not pydantic's messages."""

import pytest

from policies.config import RepoConfig, parse_config
from policies.config_file import ConfigProblem


def problems(text: str) -> list[str]:
    return [str(p) for p in parse_config(text)[1]]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("enabled: maybe\n", "line 1: enabled must be true or false"),
        ("max_inline_comments: many\n", "line 1: max_inline_comments must be a whole number"),
        ("max_inline_comments: 1.5\n", "line 1: max_inline_comments must be a whole number"),
        (
            "max_inline_comments: 101\n",
            "line 1: max_inline_comments must be a whole number from 0 to 100, not 101",
        ),
        (
            "debate:\n  initial_budget: 10\n",
            "line 2: debate.initial_budget must be a whole number of at least 1,000, not 10",
        ),
        (
            "debate:\n  budget_growth: 9\n",
            "line 2: debate.budget_growth must be a number from 1.0 to 4.0, not 9",
        ),
        ("debate:\n  budget_growth: fast\n", "line 2: debate.budget_growth must be a number"),
        (
            "min_severity: critical\n",
            "line 1: min_severity must be one of 'blocker', 'major', 'minor' or 'nit', "
            "not 'critical'",
        ),
        (
            "triggers: [opened, merged]\n",
            "line 1: triggers.1 must be one of 'opened', 'reopened', 'synchronize' or "
            "'ready_for_review', not 'merged'",
        ),
        (
            "paths:\n  exclude: vendor/**\n",
            "line 2: paths.exclude must be a list of globs (gitignore-style, such as 'src/**')",
        ),
        ("paths:\n  include: []\n", "line 2: paths.include must list at least 1 item"),
        ("ignore_authors: octocat\n", "line 1: ignore_authors must be a list"),
        ("debate: 3\n", "line 1: debate must be a mapping of options"),
        (
            "paths: [src]\n",
            "line 1: paths must be a mapping of options with the keys include, exclude",
        ),
        (
            "learnings: 3\n",
            "line 1: learnings must be a mapping of options (enabled, max_tokens, rules), "
            "or a list of {rule, paths}",
        ),
        (
            "ignore_authors: [not a login]\n",
            "line 1: ignore_authors.0 must be a GitHub login (letters, digits and hyphens, "
            "up to 39, then [bot] for an app), not 'not a login'",
        ),
        (
            "label: 'a,b'\n",
            "line 1: label must be a label of 1 to 50 characters, without commas or spaces "
            "at either end, not 'a,b'",
        ),
        ("models:\n  tester: 4\n", "line 2: models.tester must be a model's id in lower case"),
        (
            "verify:\n  command: pytest {test}\n  workflow: ci.sh\n",
            "line 3: verify.workflow must be a workflow's file name in .github/workflows/",
        ),
        (
            "instructions: " + "x" * 8_001 + "\n",
            "line 1: instructions must be at most 8,000 characters long",
        ),
        (
            "path_instructions:\n  - path: src/**\n",
            "line 2: path_instructions.0.instructions is required",
        ),
        (
            "paths:\n  include: ['!docs/**']\n",
            "line 2: paths.include.0: '!docs/**': negated globs are not supported",
        ),
        ("rounds: 3\n", "line 1: rounds is not a Tiebreak option"),
    ],
    ids=[
        "bool",
        "int-not-a-number",
        "int-with-a-fraction",
        "int-between-bounds",
        "int-with-a-lower-bound",
        "float-between-bounds",
        "float-not-a-number",
        "literal",
        "enum",
        "list-of-globs",
        "list-too-short",
        "list-not-a-list",
        "mapping-of-many-options",
        "mapping-of-few-options",
        "mapping-or-list",
        "login-pattern",
        "label-pattern",
        "model-pattern",
        "workflow-pattern",
        "string-too-long",
        "missing",
        "validator",
        "unknown-key",
    ],
)
def test_each_kind_of_problem_is_said_in_words(text: str, said: str) -> None:
    (shown,) = problems(text)

    assert shown.startswith(said)
    assert "Input should" not in shown
    assert "String should" not in shown


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("min_severty: major\n", "line 1: min_severty is not a Tiebreak option; did you mean "),
        ("debate:\n  max_round: 3\n", "line 2: debate.max_round is not a Tiebreak option; did "),
        ("paths:\n  excludes: [x]\n", "line 2: paths.excludes is not a Tiebreak option; did you"),
        ("review_draft: true\n", "line 1: review_draft is not a Tiebreak option; did you mean "),
    ],
)
def test_an_unknown_key_near_a_known_one_is_answered_with_it(text: str, said: str) -> None:
    (shown,) = problems(text)

    assert shown.startswith(said)
    assert shown.endswith(
        {
            "min": "min_severity?",
            "deb": "debate.max_rounds?",
            "pat": "paths.exclude?",
            "rev": "review_drafts?",
        }[text[:3]]
    )


def test_an_unknown_key_near_no_known_one_suggests_nothing() -> None:
    assert problems("frobnicate: 3\n") == ["line 1: frobnicate is not a Tiebreak option"]


@pytest.mark.parametrize(
    ("text", "equivalent"),
    [
        ("path_filters: ['!dist/**']\n", "use paths.exclude"),
        (
            "reviews:\n  path_instructions: []\n",
            "for reviews.path_instructions use path_instructions",
        ),
        ("reviews:\n  path_filters: []\n", "for reviews.path_filters use paths.include and"),
        ("reviews:\n  profile: chill\n", "for reviews.profile use min_severity"),
        ("reviews:\n  auto_review: {drafts: false}\n", "for reviews.auto_review use enabled, trig"),
        ("auto_review: {enabled: true}\n", "use enabled, triggers, review_drafts and ignore"),
        ("language: en-GB\n", "Tiebreak has no such option; say it in instructions"),
        ("tone_instructions: be kind\n", "use instructions"),
        ("knowledge_base: {}\n", "use learnings"),
        ("pr_reviewer:\n  extra_instructions: x\n", "for pr_reviewer.extra_instructions use instr"),
        ("config:\n  model: gpt-4\n", "for config.model use models (tester, coder, arbiter)"),
        ("applyTo: 'src/**'\n", "use path_instructions"),
        ("reviews:\n  auto_review:\n    drafts: false\n", "for reviews.auto_review.drafts use rev"),
        ("ignore_title_keywords: [wip]\n", "use ignore.title_patterns"),
        ("ignore:\n  glob: ['*.lock']\n", "use paths.exclude"),
    ],
    ids=[
        "coderabbit-path-filters",
        "coderabbit-path-instructions",
        "coderabbit-nested-path-filters",
        "coderabbit-profile",
        "coderabbit-auto-review",
        "coderabbit-top-level-auto-review",
        "coderabbit-language",
        "coderabbit-tone",
        "coderabbit-knowledge-base",
        "pr-agent-reviewer",
        "pr-agent-model",
        "copilot-apply-to",
        "coderabbit-nested-drafts",
        "coderabbit-title-keywords",
        "pr-agent-ignore-glob",
    ],
)
def test_a_key_of_another_reviewers_config_is_answered_with_tiebreaks_equivalent(
    text: str, equivalent: str
) -> None:
    (shown,) = problems(text)

    assert " is not a Tiebreak option: " in shown
    assert equivalent in shown


def test_problems_are_listed_in_line_order() -> None:
    text = "label: 'a,b'\ndebate:\n  max_rounds: 0\nenabled: maybe\nrounds: 3\nmin_severity: x\n"

    lines = [p.line for p in parse_config(text)[1]]

    assert lines == [1, 3, 4, 5, 6]


@pytest.mark.parametrize(
    ("login", "warned"),
    [
        ("dependabot", True),
        ("Renovate", True),
        ("github-actions", True),
        ("deploy-bot", True),
        ("mergebot", True),
        ("dependabot[bot]", False),
        ("deploy-bot[bot]", False),
        ("octocat", False),
        ("bottle", False),
    ],
)
def test_a_bot_named_without_its_bot_suffix_is_warned_about(login: str, warned: bool) -> None:
    config, found = parse_config(f"ignore_authors:\n  - octocat\n  - {login}\n")

    assert config.ignore_authors == ("octocat", login)  # the config is read all the same
    expected = [
        ConfigProblem(
            f"ignore_authors.1: {login!r} looks like a bot; its pull requests are opened as "
            f"{login}[bot], which this entry does not ignore",
            3,
            warning=True,
        )
    ]
    assert found == (expected if warned else [])
    if warned:
        assert str(found[0]).startswith("line 3: warning: ignore_authors.1: ")


def test_a_warning_does_not_replace_the_config_with_the_defaults() -> None:
    config, found = parse_config("min_severity: major\nignore_authors: [renovate]\n")

    assert config != RepoConfig()
    assert config.min_severity == "major"
    assert all(p.warning for p in found)


def test_a_config_with_problems_is_warned_about_its_bots_too() -> None:
    _, found = parse_config("max_inline_comments: 500\nignore_authors: [dependabot]\n")

    assert [(p.line, p.warning) for p in found] == [(1, False), (2, True)]
    assert "'dependabot' looks like a bot" in str(found[1])
