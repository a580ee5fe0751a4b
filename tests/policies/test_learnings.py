"""Learnings: how the config writes them (both forms), what a rule may be, and which a review
unit's agents read, in which order, within the budget."""

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from policies.config import parse_config
from policies.globs import compiled
from policies.guidance import Guidance
from policies.learnings import (
    LearnedRule,
    Learning,
    Learnings,
    LearningsConfig,
    LearningSource,
    directory_glob,
)

CENTS = "Money amounts are integers in cents; do not flag integer division on them."


def learned(number: int, rule: str = CENTS, paths: tuple[str, ...] = ("billing/**",)) -> Learning:
    return Learning(
        number=number,
        rule=rule,
        paths=paths,
        source=LearningSource.WITHDRAWN,
        taught_by="octocat",
        taught_at=datetime(2025, 1, number, tzinfo=UTC),
        thread_url=f"https://github.com/o/r/pull/1#discussion_r{number}",
    )


@pytest.mark.parametrize(
    "text",
    [
        f"learnings:\n  - rule: {CENTS}\n    paths: ['billing/**']\n",
        f"learnings:\n  rules:\n    - rule: {CENTS}\n      paths: ['billing/**']\n",
    ],
    ids=["short-form", "mapping"],
)
def test_the_config_holds_learnings_as_a_list_or_as_a_mapping(text: str) -> None:
    config, problems = parse_config(text)

    assert problems == []
    assert config.learnings == LearningsConfig(
        rules=(LearnedRule(rule=CENTS, paths=("billing/**",)),)
    )


def test_a_learning_in_the_config_applies_to_every_file_unless_it_says() -> None:
    config, problems = parse_config("learnings:\n  - rule: Prefer pathlib.\n")

    assert problems == []
    assert config.learnings.rules == (LearnedRule(rule="Prefer pathlib.", paths=("**",)),)


def test_learning_is_on_by_default_with_no_rules() -> None:
    defaults = LearningsConfig()

    assert (defaults.enabled, defaults.max_tokens, defaults.rules) == (True, 1_000, ())


@pytest.mark.parametrize(
    ("text", "where", "line"),
    [
        ("learnings:\n  - rule: ''\n", "learnings.0.rule", 2),
        ("learnings:\n  - rule: " + "x" * 301 + "\n", "learnings.0.rule", 2),
        ("learnings:\n  - rule: One. Two. Three.\n", "learnings.0.rule", 2),
        ("learnings:\n  - rule: x\n    paths: []\n", "learnings.0.paths", 3),
        ("learnings:\n  - rule: x\n    scope: all\n", "learnings.0.scope", 3),
        ("learnings:\n  max_tokens: 9000\n", "learnings.max_tokens", 2),
        (
            "learnings:\n  enabled: false\n  rules:\n    - paths: ['a/**']\n",
            "learnings.rules.0.rule",
            4,
        ),
        ("learnings: off\n", "learnings", 1),
    ],
    ids=[
        "empty-rule",
        "long-rule",
        "three-sentences",
        "no-globs",
        "unknown-key",
        "huge-budget",
        "no-rule",
        "not-a-list-or-mapping",
    ],
)
def test_a_bad_learning_is_named_on_its_line(text: str, where: str, line: int) -> None:
    config, problems = parse_config(text)

    assert config.learnings == LearningsConfig()
    (problem,) = problems
    assert problem.message.startswith((f"{where}:", f"{where} ")), problem
    assert problem.line == line


@pytest.mark.parametrize(
    ("rule", "kept"),
    [
        ("  Amounts are\n cents. ", "Amounts are cents."),
        ("Use e.g. cents. Never floats.", "Use e.g. cents. Never floats."),
        ("x" * 300, "x" * 300),
    ],
    ids=["whitespace-folded", "two-sentences", "at-the-limit"],
)
def test_a_rule_is_kept_on_one_line(rule: str, kept: str) -> None:
    assert LearnedRule(rule=rule).rule == kept


def test_the_json_schema_accepts_the_short_form() -> None:
    schema = LearningsConfig.model_json_schema()

    (mapping, short) = schema["anyOf"]
    assert mapping["properties"]["rules"]["maxItems"] == short["maxItems"] == 50
    assert short["type"] == "array"


# -- which learnings a unit reads ------------------------------------------------------------


def test_a_unit_reads_the_configs_learnings_then_the_most_recent() -> None:
    config = LearningsConfig(rules=(LearnedRule(rule="Config rule.", paths=("billing/**",)),))
    learnings = Learnings.of(config, [learned(1, "First."), learned(3, "Third."), learned(2)])

    read = learnings.for_paths(["billing/ledger.py"])

    assert [(item.label, item.rule) for item in read] == [
        ("config", "Config rule."),
        ("#3", "Third."),
        ("#2", CENTS),
        ("#1", "First."),
    ]


@pytest.mark.parametrize(
    ("paths", "numbers"),
    [
        (["billing/ledger.py"], [2, 1]),
        (["billing/tax/vat.py"], [2, 1]),
        (["shop/cart.py"], [3]),
        (["docs/index.md"], []),
        (["docs/index.md", "shop/cart.py"], [3]),
    ],
    ids=["its-directory", "below-it", "another-directory", "none-match", "one-file-matches"],
)
def test_a_unit_reads_the_learnings_whose_globs_match_one_of_its_files(
    paths: list[str], numbers: list[int]
) -> None:
    learnings = Learnings.of(
        LearningsConfig(), [learned(1), learned(2), learned(3, paths=("shop/*.py",))]
    )

    assert [item.number for item in learnings.for_paths(paths)] == numbers


def test_what_does_not_fit_the_budget_is_left_out_and_a_shorter_one_may_still_fit() -> None:
    long = learned(3, "L" * 290)
    short = learned(1, "Short.")
    tokens = [len(item.shown()) // 4 + 1 for item in (long, short)]
    learnings = Learnings.of(LearningsConfig(max_tokens=tokens[1] + 5), [long, short])

    assert [item.number for item in learnings.for_paths(["billing/a.py"])] == [1]
    assert Learnings.of(LearningsConfig(max_tokens=0), [short]).for_paths(["billing/a"]) == []


def test_learning_turned_off_applies_nothing_not_even_the_configs() -> None:
    config = LearningsConfig(enabled=False, rules=(LearnedRule(rule="Config rule."),))

    learnings = Learnings.of(config, [learned(1)])

    assert not learnings
    assert learnings.for_paths(["billing/a.py"]) == []


def test_learnings_reach_the_agents_in_the_guidance_under_their_own_heading() -> None:
    guidance = Guidance(learnings=Learnings.of(LearningsConfig(), [learned(4)]))

    text = guidance.for_paths(["billing/ledger.py"])

    assert text.startswith("Learnings: rules this repository's people taught")
    assert text.endswith(f"- [#4; billing/**] {CENTS}")
    assert guidance.for_paths(["shop/cart.py"]) == ""


# -- the default scope -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "glob", "matches", "misses"),
    [
        ("billing/ledger.py", "billing/**", "billing/tax/vat.py", "shop/billing/x.py"),
        ("setup.py", "/setup.py", "setup.py", "pkg/setup.py"),
        ("app/[id]/page.ts", "app/\\[id]/**", "app/[id]/x.ts", "app/i/x.ts"),
        ("!odd/*/x.py", "\\!odd/\\*/**", "!odd/*/y.py", "!odd/a/y.py"),
        ("#notes/a.md", "\\#notes/**", "#notes/b.md", "notes/b.md"),
    ],
    ids=["a-directory", "the-root", "brackets", "wildcards-and-bang", "hash"],
)
def test_a_learning_applies_by_default_to_its_files_directory_read_literally(
    path: str, glob: str, matches: str, misses: str
) -> None:
    assert directory_glob(path) == glob
    globs = compiled((glob,))
    assert globs.match(matches)
    assert not globs.match(misses)
    assert Learning(rule="x", paths=(glob,), source=LearningSource.CONFIG).paths == (glob,)


def test_a_stored_learning_is_refused_with_a_glob_tiebreak_cannot_match() -> None:
    with pytest.raises(ValidationError, match="negated globs"):
        Learning(rule="x", paths=("!a/**",), source=LearningSource.THUMBS_DOWN)
