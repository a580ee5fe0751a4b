"""parse_config: what a repository's `.github/tiebreak.yml` asks for, and what is wrong with it."""

import pytest

from policies.config import Models, Paths, RepoConfig, Trigger, parse_config
from policies.config_file import MAX_CONFIG_BYTES, MAX_CONFIG_NODES, ConfigProblem
from policies.conversation import HearingPolicy
from policies.debate import DebatePolicy
from policies.guidance import ContextOptions, PathInstruction
from policies.ignore import IgnoreFilters, PullFacts
from policies.learnings import LearnedRule, LearningsConfig
from policies.panel import Focus, Topology
from policies.safety import ALWAYS_PROTECTED, ProtectedPaths
from policies.summary import SummaryConfig
from policies.verify import VerifyConfig

DEFAULTS = RepoConfig()

EVERY_OPTION = """\
enabled: false
triggers: [opened, ready_for_review]
review_drafts: true
ignore_authors:
  - octo-app[bot]
  - Octocat
ignore:
  base_branches: [gh-pages]
  head_branches: ["release/**"]
  title_patterns: ["[WIP]*"]
  labels: [no-review]
paths:
  include: ["src/**", "lib/**"]
  exclude: ["*.lock", "src/generated/**"]
min_severity: major
max_inline_comments: 4
label: needs a human
review_event_on_unresolved: REQUEST_CHANGES
models:
  tester: claude-opus-4
  coder: claude-sonnet-4.5
  arbiter: claude-opus-4@20250514
debate:
  max_rounds: 4
  convergence_threshold: 2
  max_findings_per_turn: 5
  max_findings_total: 12
  max_exchanges_per_finding: 2
  max_retries: 4
  max_turn_attempts: 3
  max_output_tokens: 2048
  initial_budget: 30000
  budget_growth: 2.0
  budget_cap: 120000
  arbiter_budget: 40000
  token_ceiling: 200000
  arbitration: false
  protected_paths: ["secrets/**", "deploy/*.tf"]
  testers: 3
  focus: [security, correctness]
  topology: full
conversation:
  enabled: false
  max_replies: 3
context:
  enabled: false
  max_tokens: 4000
verify:
  command: python -m pytest -x -q {test}
  setup: python -m compileall -q .
  timeout_s: 30
  memory_mb: 512
  disk_mb: 256
  processes: 32
  max_runs: 10
  max_seconds: 300
  max_attempts: 3
  workflow: tiebreak-verify.yml
  forks: true
  timeout_minutes: 15
instructions: Money is Decimal, never float.
path_instructions:
  - path: "migrations/**"
    instructions: Every migration must be reversible.
guidelines: [CONTRIBUTING.md, docs/style.md]
learnings:
  enabled: false
  max_tokens: 500
  rules:
    - rule: Amounts are integers in cents; integer division on them is intended.
      paths: ["billing/**"]
summary:
  walkthrough: false
  diagram: true
  effort: false
"""


def only_problem(text: str) -> ConfigProblem:
    """The one problem `text` has, checking that the defaults were used instead."""
    config, problems = parse_config(text)

    assert config == DEFAULTS
    assert len(problems) == 1, problems
    return problems[0]


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """The "billion laughs": each anchor lists the one before it `width` times."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def merge_bomb(levels: int = 30) -> str:
    """Merge keys doubling a mapping at each level: building the document would expand them."""
    lines = ["m0: &m0 {k: 1}"]
    lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text",
    ["", "\n", "# Tiebreak: all defaults for now\n", "---\n", "~\n"],
    ids=["empty", "blank-line", "only-a-comment", "empty-document", "null"],
)
def test_a_file_without_options_gives_the_defaults(text: str) -> None:
    assert parse_config(text) == (DEFAULTS, [])


def test_defaults_review_every_trigger_and_post_everything() -> None:
    assert DEFAULTS.enabled is True
    assert DEFAULTS.triggers == tuple(Trigger)
    assert DEFAULTS.review_drafts is False
    assert DEFAULTS.paths == Paths(include=("**",), exclude=())
    assert DEFAULTS.min_severity == "nit"
    assert DEFAULTS.max_inline_comments == 10
    assert DEFAULTS.label == "Unresolved"
    assert DEFAULTS.review_event_on_unresolved == "COMMENT"
    assert DEFAULTS.models == Models(tester=None, coder=None, arbiter=None)
    assert DEFAULTS.debate == DebatePolicy()


def test_a_file_setting_every_option_gives_exactly_those_values() -> None:
    config, problems = parse_config(EVERY_OPTION)

    assert problems == []
    assert config == RepoConfig(
        enabled=False,
        triggers=(Trigger.OPENED, Trigger.READY_FOR_REVIEW),
        review_drafts=True,
        ignore_authors=("octo-app[bot]", "Octocat"),
        ignore=IgnoreFilters(
            base_branches=("gh-pages",),
            head_branches=("release/**",),
            title_patterns=("[WIP]*",),
            labels=("no-review",),
        ),
        paths=Paths(include=("src/**", "lib/**"), exclude=("*.lock", "src/generated/**")),
        min_severity="major",
        max_inline_comments=4,
        label="needs a human",
        review_event_on_unresolved="REQUEST_CHANGES",
        models=Models(
            tester="claude-opus-4", coder="claude-sonnet-4.5", arbiter="claude-opus-4@20250514"
        ),
        debate=DebatePolicy(
            max_rounds=4,
            convergence_threshold=2,
            max_findings_per_turn=5,
            max_findings_total=12,
            max_exchanges_per_finding=2,
            max_retries=4,
            max_turn_attempts=3,
            max_output_tokens=2048,
            initial_budget=30_000,
            budget_growth=2.0,
            budget_cap=120_000,
            arbiter_budget=40_000,
            token_ceiling=200_000,
            arbitration=False,
            protected_paths=("secrets/**", "deploy/*.tf"),
            testers=3,
            focus=(Focus.SECURITY, Focus.CORRECTNESS),
            topology=Topology.FULL,
        ),
        conversation=HearingPolicy(enabled=False, max_replies=3),
        context=ContextOptions(enabled=False, max_tokens=4000),
        verify=VerifyConfig(
            command="python -m pytest -x -q {test}",
            setup="python -m compileall -q .",
            timeout_s=30,
            memory_mb=512,
            disk_mb=256,
            processes=32,
            max_runs=10,
            max_seconds=300,
            max_attempts=3,
            workflow="tiebreak-verify.yml",
            forks=True,
            timeout_minutes=15,
        ),
        instructions="Money is Decimal, never float.",
        path_instructions=(
            PathInstruction(
                path="migrations/**", instructions="Every migration must be reversible."
            ),
        ),
        guidelines=("CONTRIBUTING.md", "docs/style.md"),
        learnings=LearningsConfig(
            enabled=False,
            max_tokens=500,
            rules=(
                LearnedRule(
                    rule="Amounts are integers in cents; integer division on them is intended.",
                    paths=("billing/**",),
                ),
            ),
        ),
        summary=SummaryConfig(walkthrough=False, diagram=True, effort=False),
    )
    assert config.debate.protected_paths == (*ALWAYS_PROTECTED, "secrets/**", "deploy/*.tf")


def test_the_every_option_file_really_sets_every_option() -> None:
    # Keeps the test above honest as options are added: each must differ from its default.
    config, _ = parse_config(EVERY_OPTION)

    for section, default in [
        (config, DEFAULTS),
        (config.paths, DEFAULTS.paths),
        (config.models, DEFAULTS.models),
        (config.debate, DEFAULTS.debate),
        (config.conversation, DEFAULTS.conversation),
        (config.context, DEFAULTS.context),
        (config.verify, DEFAULTS.verify),
        (config.learnings, DEFAULTS.learnings),
        (config.summary, DEFAULTS.summary),
    ]:
        for name in type(section).model_fields:
            assert getattr(section, name) != getattr(default, name), name


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("enabled: true\n  label: x\n", 2),
        ("\n\nenabled: true\n  label: x\n", 4),
        # PyYAML notices at the end of the stream; the problem stays on the file's last line.
        ("triggers: [opened\n", 1),
        ("label: 'unterminated\n", 1),
        ("enabled:\ttrue\n", 1),
        ("enabled: true\n---\nenabled: false\n", 2),
        ("enabled: *nowhere\n", 1),
        ("label: !!python/name:os.system x\n", 1),
        ("enabled: true\nlabel: 2001-13-01\n", 2),
        ("debate:\n  max_rounds: !!int many\n", 2),
        ("debate:\n  budget_growth: !!float lots\n", 2),
        ("max_inline_comments: " + "9" * 5_000 + "\n", 1),
    ],
    ids=[
        "bad-indent",
        "bad-indent-after-blank-lines",
        "unclosed-flow-list",
        "unclosed-quote",
        "tab",
        "two-documents",
        "undefined-alias",
        "python-tag",
        "impossible-date",
        "int-tag-on-a-word",
        "float-tag-on-a-word",
        "five-thousand-digit-integer",
    ],
)
def test_invalid_yaml_gives_the_defaults_and_its_line(text: str, line: int) -> None:
    problem = only_problem(text)

    assert problem.message.startswith("the file is not valid YAML")
    assert problem.line == line


def test_a_control_character_is_invalid_yaml() -> None:
    assert only_problem("label: \x07\n").message.startswith("the file is not valid YAML")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[enabled, review_drafts]\n", 1),
        ("just a sentence\n", 1),
        ("42\n", 1),
        ("# options\n\n- enabled\n- review_drafts\n", 3),
    ],
    ids=["list", "string", "number", "list-after-a-comment"],
)
def test_a_document_that_is_not_a_mapping_is_a_problem(text: str, line: int) -> None:
    problem = only_problem(text)

    assert problem == ConfigProblem("the file must be a mapping of options", line)


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        ("rounds: 3\n", "rounds", 1),
        ("debate: {rounds: 3}\n", "debate.rounds", 1),
        ("enabled: true\ndebate:\n  max_rounds: 3\n  rounds: 3\n", "debate.rounds", 4),
        ("debate:\n  rounds:\n    - 3\n", "debate.rounds", 2),
        ("paths:\n  includes: ['src/**']\n", "paths.includes", 2),
        ("models:\n  reviewer: claude-opus-4\n", "models.reviewer", 2),
    ],
    ids=["top-level", "nested-flow", "nested-block", "key-above-its-value", "paths", "models"],
)
def test_an_unknown_key_is_named_by_its_dotted_path_on_its_line(
    text: str, path: str, line: int
) -> None:
    problem = only_problem(text)

    assert problem.message.startswith(f"{path} is not a Tiebreak option")
    assert problem.line == line


@pytest.mark.parametrize(
    ("text", "path", "line", "says"),
    [
        ("max_inline_comments: 101\n", "max_inline_comments", 1, "from 0 to 100, not 101"),
        ("max_inline_comments: -1\n", "max_inline_comments", 1, "from 0 to 100, not -1"),
        (
            "enabled: true\ndebate:\n  max_rounds: 0\n",
            "debate.max_rounds",
            3,
            "must be a whole number from 1 to 50",
        ),
        ("debate:\n  budget_growth: x\n", "debate.budget_growth", 2, "number"),
        ("debate:\n  initial_budget: 50000\n  budget_cap: 40000\n", "debate", 1, "budget_cap"),
        ("enabled: maybe\n", "enabled", 1, "must be true or false"),
        ("min_severity: critical\n", "min_severity", 1, "'nit'"),
        ("review_event_on_unresolved: APPROVE\n", "review_event_on_unresolved", 1, "'COMMENT'"),
        ("triggers:\n  - opened\n  - closed\n", "triggers.1", 3, "'synchronize'"),
        (
            "ignore_authors:\n  - octocat\n  - not a login\n",
            "ignore_authors.1",
            3,
            "must be a GitHub login",
        ),
        ("ignore_authors: ['-octocat']\n", "ignore_authors.0", 1, "must be a GitHub login"),
        ("ignore_authors: [" + "a" * 40 + "]\n", "ignore_authors.0", 1, "must be a GitHub login"),
        ("label: urgent,review\n", "label", 1, "must be a label of 1 to 50"),
        ("label: " + "x" * 51 + "\n", "label", 1, "must be a label of 1 to 50"),
        ("label: ' padded'\n", "label", 1, "must be a label of 1 to 50"),
        ("label: ''\n", "label", 1, "must be a label of 1 to 50"),
        ("label: ',urgent'\n", "label", 1, "must be a label of 1 to 50"),
        ("label: 'urgent,'\n", "label", 1, "must be a label of 1 to 50"),
        ("models:\n  coder: claude sonnet\n", "models.coder", 2, "must be a model's id"),
        ("models:\n  arbiter: Claude-Opus\n", "models.arbiter", 2, "must be a model's id"),
        ("paths:\n  include: ['!docs/**']\n", "paths.include.0", 2, "negated"),
        ("paths:\n  include: []\n", "paths.include", 2, "at least 1"),
        ("paths:\n  exclude: ['*.lock', '']\n", "paths.exclude.1", 2, "empty"),
        ("paths:\n  exclude: ['   ']\n", "paths.exclude.0", 2, "empty"),
        (
            "debate:\n  protected_paths: ['!.github/workflows/release.yml']\n",
            "debate.protected_paths.0",
            2,
            "negated",
        ),
        ("debate:\n  protected_paths:\n    - ''\n", "debate.protected_paths.0", 3, "empty"),
        ("debate:\n  testers: 6\n", "debate.testers", 2, "from 1 to 5, not 6"),
        ("debate:\n  testers: 0\n", "debate.testers", 2, "from 1 to 5, not 0"),
        ("debate:\n  testers: 3\n  focus: [style]\n", "debate.focus.0", 3, "security"),
        (
            "debate:\n  testers: 2\n  focus: [security, security]\n",
            "debate",
            1,
            "each tester needs its own focus",
        ),
        (
            "debate:\n  focus: [security, performance]\n",
            "debate",
            1,
            "focus names 2 focuses for 1 tester",
        ),
        ("debate:\n  testers: 3\n  topology: star\n", "debate.topology", 3, "'ring' or 'full'"),
    ],
    ids=[
        "too-many-inline-comments",
        "negative-inline-comments",
        "no-rounds",
        "growth-not-a-number",
        "budget-cap-below-initial",
        "enabled-not-a-boolean",
        "unknown-severity",
        "approve-event",
        "closed-trigger",
        "login-with-spaces",
        "login-with-leading-hyphen",
        "login-too-long",
        "label-with-comma",
        "label-too-long",
        "label-with-leading-space",
        "label-empty",
        "label-leading-comma",
        "label-trailing-comma",
        "model-with-space",
        "model-uppercase",
        "negated-include",
        "nothing-included",
        "empty-exclude",
        "blank-exclude",
        "negated-protected-path",
        "empty-protected-path",
        "six-testers",
        "no-tester",
        "unknown-focus",
        "focus-twice",
        "more-focus-than-testers",
        "unknown-topology",
    ],
)
def test_a_value_out_of_range_gives_the_defaults_and_a_problem_on_its_line(
    text: str, path: str, line: int, says: str
) -> None:
    problem = only_problem(text)

    assert problem.message.startswith(f"{path} ") or problem.message.startswith(f"{path}: ")
    assert says in problem.message
    assert problem.line == line


@pytest.mark.parametrize(
    "text",
    [
        "max_inline_comments: 0\n",
        "max_inline_comments: 100\n",
        "label: x\n",
        "label: " + "x" * 50 + "\n",
        "label: needs human review\n",
        "ignore_authors: [" + "a" * 39 + "]\n",
        "ignore_authors:\n  - my-app[bot]\n",
        "triggers: []\n",
        "models:\n  tester: anthropic.claude-3-5-sonnet-20240620-v1:0\n",
        "debate:\n  max_rounds: 50\n",
        "debate:\n  testers: 5\n  focus: [general, compatibility]\n",
    ],
    ids=[
        "no-inline-comments",
        "most-inline-comments",
        "one-character-label",
        "fifty-character-label",
        "label-with-spaces",
        "longest-login",
        "app-login",
        "reviews-only-on-request",
        "bedrock-model-name",
        "most-rounds",
        "largest-panel",
    ],
)
def test_values_at_their_limits_are_accepted(text: str) -> None:
    config, problems = parse_config(text)

    assert problems == []
    assert config != DEFAULTS


@pytest.mark.parametrize(
    ("word", "enabled"),
    [("yes", True), ("no", False), ("on", True), ("off", False), ("true", True), ("False", False)],
)
def test_yaml_1_1_booleans_turn_reviews_on_and_off(word: str, enabled: bool) -> None:
    config, problems = parse_config(f"enabled: {word}\n")

    assert problems == []
    assert config.enabled is enabled


def test_several_problems_are_all_reported_each_on_its_line() -> None:
    text = """\
enabled: true
max_inline_comments: 500
debate:
  rounds: 3
models:
  tester: Claude Opus
label: first
label: second
"""
    config, problems = parse_config(text)

    assert config == DEFAULTS
    assert sorted((p.line, p.message.split()[0].rstrip(":")) for p in problems) == [
        (2, "max_inline_comments"),
        (4, "debate.rounds"),
        (6, "models.tester"),
        (8, "label"),
    ]


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        ("enabled: true\nlabel: a\nenabled: false\n", "enabled", 3),
        (
            "debate:\n  max_rounds: 3\n  arbitration: false\n  max_rounds: 4\n",
            "debate.max_rounds",
            4,
        ),
        ("'enabled': true\nenabled: false\n", "enabled", 2),
    ],
    ids=["top-level", "nested", "quoted-and-plain"],
)
def test_a_key_set_twice_is_a_problem_on_the_second(text: str, path: str, line: int) -> None:
    assert only_problem(text) == ConfigProblem(f"{path} is set twice", line)


def test_any_problem_drops_the_whole_config() -> None:
    text = "enabled: false\nlabel: needs a human\nmax_inline_comments: 101\n"

    config, problems = parse_config(text)

    assert len(problems) == 1
    assert config == DEFAULTS
    assert config.enabled is True
    assert config.label == "Unresolved"


def test_a_file_over_64_kib_is_refused_unread() -> None:
    text = "enabled: false\n# " + "x" * MAX_CONFIG_BYTES + "\n"

    assert only_problem(text) == ConfigProblem(
        f"the file is larger than {MAX_CONFIG_BYTES:,} bytes"
    )


def test_the_size_limit_counts_bytes_not_characters() -> None:
    text = "# " + "é" * (MAX_CONFIG_BYTES // 2) + "\n"

    assert len(text) < MAX_CONFIG_BYTES
    assert only_problem(text).message == f"the file is larger than {MAX_CONFIG_BYTES:,} bytes"


def test_a_file_of_exactly_64_kib_is_read() -> None:
    head = "enabled: false\n# "
    text = head + "x" * (MAX_CONFIG_BYTES - len(head) - 1) + "\n"

    assert len(text.encode()) == MAX_CONFIG_BYTES
    assert parse_config(text) == (RepoConfig(enabled=False), [])


@pytest.mark.parametrize(
    "text",
    [alias_bomb(), merge_bomb(), "a: &a [*a]\n"],
    ids=["billion-laughs", "merge-key-doubling", "self-referencing-alias"],
)
def test_aliases_standing_for_too_many_values_are_refused(text: str) -> None:
    assert len(text.encode()) < 2_000  # small on disk: only the expansion is large
    assert only_problem(text) == ConfigProblem(
        f"the file holds more than {MAX_CONFIG_NODES:,} values"
    )


def test_aliases_within_the_limit_are_read() -> None:
    text = """\
paths:
  include: &owned ["src/**"]
debate:
  protected_paths: *owned
"""
    config, problems = parse_config(text)

    assert problems == []
    assert config.paths.include == ("src/**",)
    assert config.debate.protected_paths == (*ALWAYS_PROTECTED, "src/**")


@pytest.mark.parametrize(
    "text",
    [
        "[" * 2_000 + "]" * 2_000,
        "debate:\n" + "".join(" " * depth + f"k{depth}:\n" for depth in range(1, 200)),
    ],
    ids=["flow", "block"],
)
def test_deep_nesting_is_a_problem_not_a_crash(text: str) -> None:
    problem = only_problem(text)

    assert problem.message.startswith("the file is not valid YAML")
    assert "nest" in problem.message
    assert problem.line is not None


@pytest.mark.parametrize(
    ("problem", "shown"),
    [
        (
            ConfigProblem("debate.rounds: Extra inputs are not permitted", 4),
            "line 4: debate.rounds: Extra inputs are not permitted",
        ),
        (
            ConfigProblem("the file is larger than 65,536 bytes"),
            "the file is larger than 65,536 bytes",
        ),
    ],
    ids=["with-line", "without-line"],
)
def test_a_problem_reads_as_its_line_and_message(problem: ConfigProblem, shown: str) -> None:
    assert str(problem) == shown


@pytest.mark.parametrize(
    "path", ["README.md", "src/app.py", ".github/workflows/ci.yml", "deep/down/poetry.lock"]
)
def test_by_default_every_changed_file_is_reviewed(path: str) -> None:
    assert DEFAULTS.path_filter().reviews(path)


@pytest.mark.parametrize(
    ("include", "exclude", "path", "reviewed"),
    [
        (["src/**"], [], "src/app.py", True),
        (["src/**"], [], "src/deep/down/app.py", True),
        (["src/**"], [], "docs/a.md", False),
        (["src/**"], [], "lib/src/app.py", False),  # a glob with a slash is anchored at the root
        (["*.py"], [], "a/b/c.py", True),  # a slash-free glob matches at any depth
        (["*.py"], [], "a/b/c.pyi", False),
        (["**"], ["*.lock"], "poetry.lock", False),
        (["**"], ["*.lock"], "sub/dir/yarn.lock", False),
        (["**"], ["*.lock"], "src/app.py", True),
        (["**"], ["vendor/"], "vendor/lib/x.go", False),
        (["src/**"], ["src/generated/**"], "src/generated/api.py", False),  # exclude wins
        (["src/**"], ["src/generated/**"], "src/api.py", True),
        (["src/**"], ["*.py"], "src/app.py", False),
    ],
)
def test_paths_are_gitignore_globs_and_exclude_wins(
    include: list[str], exclude: list[str], path: str, reviewed: bool
) -> None:
    config = RepoConfig(paths=Paths(include=tuple(include), exclude=tuple(exclude)))

    assert config.path_filter().reviews(path) is reviewed


@pytest.mark.parametrize(
    ("text", "where", "line", "why"),
    [
        (
            "paths:\n  exclude: ['x[z-a]y']\n",
            "paths.exclude.0",
            2,
            "can match: bad character range",
        ),
        ("paths:\n  include:\n    - src/**\n    - 'src\\'\n", "paths.include.1", 4, "git does not"),
        (
            "path_instructions:\n  - path: 'db/[z-a]'\n    instructions: x\n",
            "path_instructions.0.path",
            2,
            "bad character range",
        ),
        (
            "debate:\n  protected_paths: ['secrets/**', '" + "*a" * 8_000 + "']\n",
            "debate.protected_paths.1",
            2,
            "longer than 200 characters",
        ),
        (
            "paths:\n  exclude: [" + ", ".join(f"'d{i}/*.py'" for i in range(101)) + "]\n",
            "paths.exclude",
            2,
            "at most 100, not 101",
        ),
        (
            "paths:\n  exclude: ['" + "*a" * 9 + "b']\n",
            "paths.exclude.0",
            2,
            "has more than 8 wildcards",
        ),
        (
            "path_instructions:\n  - path: '[[:digit:]]*.sql'\n    instructions: x\n",
            "path_instructions.0.path",
            2,
            "character classes such as [:digit:] are not supported",
        ),
        (
            "learnings:\n  - rule: x\n    paths: ['src/[z-a]']\n",
            "learnings.0.paths.0",
            3,
            "bad character range",
        ),
        (
            "learnings:\n  rules:\n    - rule: x\n      paths: ['!src/**']\n",
            "learnings.rules.0.paths.0",
            4,
            "negated globs are not supported",
        ),
    ],
    ids=[
        "bad-range",
        "trailing-backslash",
        "bad-range-in-instructions",
        "too-long",
        "too-many",
        "too-many-wildcards",
        "posix-character-class",
        "bad-range-in-a-learning",
        "negation-in-a-learning",
    ],
)
def test_a_glob_tiebreak_cannot_match_is_named_on_its_line(
    text: str, where: str, line: int, why: str
) -> None:
    problem = only_problem(text)

    assert problem.message.startswith(f"{where}:"), problem
    assert why in problem.message
    assert len(problem.message) < 300  # a glob too long to show is cut
    assert problem.line == line


@pytest.mark.parametrize(
    ("login", "ignored"),
    [
        ("dependabot[bot]", True),
        ("Dependabot[bot]", True),
        ("RENOVATE[BOT]", True),
        ("dependabot", False),
        ("octocat", False),
    ],
)
def test_bots_are_ignored_by_default(login: str, ignored: bool) -> None:
    assert DEFAULTS.ignores_author(login) is ignored


@pytest.mark.parametrize(
    ("login", "ignored"),
    [("octocat", True), ("OctoCat", True), ("octocat2", False), ("dependabot[bot]", False)],
)
def test_ignored_authors_match_case_insensitively_and_replace_the_defaults(
    login: str, ignored: bool
) -> None:
    config, problems = parse_config("ignore_authors: [Octocat]\n")

    assert problems == []
    assert config.ignores_author(login) is ignored


@pytest.mark.parametrize(
    ("text", "protected"),
    [
        ("debate:\n  protected_paths: ['secrets/**']\n", (*ALWAYS_PROTECTED, "secrets/**")),
        ("debate:\n  protected_paths: []\n", ALWAYS_PROTECTED),
        (
            "debate:\n  protected_paths: ['.github/tiebreak.yml', 'secrets/**']\n",
            (*ALWAYS_PROTECTED, "secrets/**"),
        ),
    ],
    ids=["one-more", "none", "repeating-one-always-protected"],
)
def test_a_config_adds_protected_paths_to_the_always_protected(
    text: str, protected: tuple[str, ...]
) -> None:
    config, problems = parse_config(text)
    guard = ProtectedPaths(config.debate.protected_paths)

    assert problems == []
    assert config.debate.protected_paths == protected
    assert guard.forbids(".github/workflows/ci.yml") is not None
    assert guard.forbids(".github/tiebreak.yml") is not None


@pytest.mark.parametrize(
    ("config", "trigger", "draft", "author", "why"),
    [
        ("", "opened", False, "octocat", None),
        ("enabled: false\n", "opened", False, "octocat", "Tiebreak is turned off"),
        ("triggers: [opened]\n", "synchronize", False, "octocat", "does not review on"),
        ("", "opened", True, "octocat", "drafts are reviewed once they are ready"),
        ("review_drafts: true\n", "opened", True, "octocat", None),
        ('ignore_authors: ["Dependabot[bot]"]\n', "opened", False, "dependabot[bot]", "ignores"),
    ],
)
def test_the_config_declines_the_automatic_reviews_it_does_not_want(
    config: str, trigger: str, draft: bool, author: str, why: str | None
) -> None:
    parsed, problems = parse_config(config)
    assert problems == []

    declined = parsed.declines(trigger, PullFacts(author=author, draft=draft))

    assert declined is None if why is None else why in (declined or "")


@pytest.mark.parametrize(
    ("text", "where", "line"),
    [
        ("guidelines: [../secrets.txt]\n", "guidelines.0", 1),
        ("guidelines: [/etc/passwd]\n", "guidelines.0", 1),
        (
            "path_instructions:\n  - path: '!src/**'\n    instructions: x\n",
            "path_instructions.0.path",
            3 - 1,
        ),
        ("path_instructions:\n  - path: src/**\n", "path_instructions.0.instructions", 2),
        ("context:\n  max_tokens: 1000000\n", "context.max_tokens", 2),
        ("instructions: " + "x" * 9_000 + "\n", "instructions", 1),
    ],
    ids=[
        "climbing-guideline",
        "absolute-guideline",
        "negated-glob",
        "no-instructions",
        "huge-context-budget",
        "huge-instructions",
    ],
)
def test_a_bad_guidance_or_context_option_is_named_on_its_line(
    text: str, where: str, line: int
) -> None:
    problem = only_problem(text)

    assert problem.message.startswith((f"{where}:", f"{where} ")), problem
    assert problem.line == line


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("verify:\n  workflow: tiebreak-verify.yml\n", "verify.workflow needs verify.command"),
        ("verify:\n  command: pytest {test}\n  workflow: ../ci.yml\n", "a workflow's file name"),
        ("verify:\n  command: pytest {test}\n  workflow: ci.sh\n", "a workflow's file name"),
        ("verify:\n  command: pytest {test}\n  timeout_minutes: 0\n", "from 1 to 60"),
    ],
)
def test_a_workflow_for_the_tests_is_a_workflow_file_with_a_command(text: str, says: str) -> None:
    assert says in only_problem(text).message


def test_tests_run_in_actions_only_with_a_workflow_and_a_command() -> None:
    config, _ = parse_config("verify:\n  command: pytest {test}\n  workflow: tiebreak-verify.yml\n")

    assert config.verify.in_actions
    assert not VerifyConfig(command="pytest {test}").in_actions
    assert not config.verify.forks
