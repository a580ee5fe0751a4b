"""The per-repository config file, `.github/tiebreak.yml`, read from the base branch.

A frozen model that refuses unknown keys; its JSON Schema (`docs/config.schema.json`) and
its reference (`docs/configuration.md`) are generated from it (`tiebreak config-docs`). A file
that cannot be read as this model never breaks a review: :func:`parse_config` gives the
defaults and says what is wrong, and on which line.
"""

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    StringConstraints,
    ValidationError,
)

from policies.config_file import (
    ConfigProblem,
    Document,
    dotted,
    line_of,
    read_document,
)
from policies.config_section import ConfigSection, Switch
from policies.config_wording import Shape, problem_words, unmarked_bots
from policies.conversation import HearingPolicy
from policies.debate import DebatePolicy
from policies.defaults import CONFIG_PATH as CONFIG_PATH
from policies.globs import compiled, listed_globs
from policies.guidance import (
    MAX_GUIDELINES,
    ContextOptions,
    GuidelinePath,
    Instructions,
    PathInstruction,
)
from policies.ignore import IgnoreFilters, PullFacts
from policies.learnings import LearningsConfig
from policies.summary import SummaryConfig
from policies.verify import VerifyConfig

DEFAULTS_REPO = ".github"
"""The repository of an organisation's (or a user's) defaults, as GitHub's own convention for
community health files has it: `OWNER/.github`."""
DEFAULTS_PATH = "tiebreak.yml"
"""The defaults' file in :data:`DEFAULTS_REPO`, at its root: that repository's own
`.github/tiebreak.yml` stays the config of its own pull requests."""


class Trigger(StrEnum):
    """Pull request events that start a review by themselves."""

    OPENED = "opened"
    REOPENED = "reopened"
    SYNCHRONIZE = "synchronize"
    """A push to the pull request's branch."""
    READY_FOR_REVIEW = "ready_for_review"
    """A draft marked ready for review."""


Login = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$"),
    Shape("a GitHub login (letters, digits and hyphens, up to 39, then [bot] for an app)"),
]
MODEL_ID = (
    r"^(?:[a-z0-9][a-z0-9.:@-]{0,99}"
    r"|arn:aws[a-z-]*:bedrock:[a-z0-9-]+:[0-9]{12}:[a-z-]+/[A-Za-z0-9.:-]{1,120})$"
)
"""A model as Anthropic's API (`claude-sonnet-5-5`), Vertex AI (`claude-sonnet-5-5@20260101`) or
Bedrock names it: a model or inference profile id (`us.anthropic.claude-sonnet-5-5`), or the ARN
of an inference profile or of provisioned throughput."""
ModelName = Annotated[
    str,
    StringConstraints(pattern=MODEL_ID),
    Shape("a model's id in lower case (claude-sonnet-5-5), or a Bedrock ARN"),
]
Globs = Annotated[
    tuple[str, ...],
    AfterValidator(listed_globs),
    Shape("a list of globs (gitignore-style, such as 'src/**')"),
]


class Paths(ConfigSection):
    """Which changed files are reviewed: gitignore-style globs, matched against each path."""

    include: Annotated[Globs, Field(min_length=1)] = ("**",)
    """Files to review; a file must match one of these."""

    exclude: Globs = ()
    """Files never reviewed, even when included (lock files, generated code, vendored code)."""


class Models(ConfigSection):
    """The model each role runs on, named as the server's provider names it (Anthropic's API
    and Vertex AI: `claude-sonnet-5-5`; Bedrock: `us.anthropic.claude-sonnet-5-5`, or an
    inference profile's ARN); unset roles use the server's default model."""

    tester: ModelName | None = None
    """The model that raises findings."""

    coder: ModelName | None = None
    """The model that answers them with patches or arguments."""

    arbiter: ModelName | None = None
    """The model that rules on deadlocks."""


class RepoConfig(ConfigSection):
    """What a repository may tune."""

    enabled: Switch = True
    """Whether Tiebreak reviews this repository's pull requests at all."""

    triggers: tuple[Trigger, ...] = tuple(Trigger)
    """Pull request events that start a review automatically. `/tiebreak review` works
    whatever this says; an empty list means reviews only on request."""

    review_drafts: Switch = False
    """Whether draft pull requests are reviewed automatically (otherwise, once marked ready)."""

    ignore_authors: tuple[Login, ...] = ("dependabot[bot]", "renovate[bot]")
    """Logins whose pull requests are not reviewed automatically (case-insensitive)."""

    ignore: IgnoreFilters = IgnoreFilters()
    """Pull requests not reviewed automatically, by branch, title or label."""

    paths: Paths = Paths()
    """Which changed files are reviewed."""

    min_severity: Literal["blocker", "major", "minor", "nit"] = "nit"
    """The least severe finding that is posted; less severe findings are only counted."""

    max_inline_comments: int = Field(default=10, ge=0, le=100)
    """Inline comments per review, most severe first; the rest are listed in the summary."""

    label: Annotated[
        str,
        StringConstraints(pattern=r"^[^\s,](?:[^,\n]{0,48}[^\s,])?$"),
        Shape("a label of 1 to 50 characters, without commas or spaces at either end"),
    ] = "Unresolved"
    """The label put on a pull request with unresolved findings."""

    review_event_on_unresolved: Literal["COMMENT", "REQUEST_CHANGES"] = "COMMENT"
    """How a review with unresolved findings is submitted: as a comment, or requesting
    changes (which blocks merging where reviews are required)."""

    models: Models = Models()
    """The model each role runs on."""

    debate: DebatePolicy = DebatePolicy()
    """The debate's limits, budgets and protected paths."""

    conversation: HearingPolicy = HearingPolicy()
    """Whether people's replies on Tiebreak's finding threads are heard, and how many."""

    context: ContextOptions = ContextOptions()
    """The code around each change the agents read, at the pull request's head."""

    verify: VerifyConfig = VerifyConfig()
    """Running the tests the tester writes as proof of its findings (`tiebreak review`)."""

    instructions: Instructions = ""
    """Free text every review's agents read as the project's guidance: what the tester looks
    for, how the coder answers, what the arbiter weighs. It cannot change the debate's rules,
    limits or protected paths."""

    path_instructions: tuple[PathInstruction, ...] = Field(default=(), max_length=50)
    """Instructions for the review units whose files match a glob: a list of
    `{path: glob, instructions: text}`, each glob gitignore-style and each text up to 8,000
    characters."""

    guidelines: tuple[GuidelinePath, ...] = Field(default=("AGENTS.md",), max_length=MAX_GUIDELINES)
    """Files of the base branch whose text the agents read as the project's conventions,
    each up to 16,000 characters; a missing file is skipped."""

    learnings: Annotated[
        LearningsConfig,
        Shape("a mapping of options (enabled, max_tokens, rules), or a list of {rule, paths}"),
    ] = LearningsConfig()
    """What the repository's people taught Tiebreak, and whether it learns."""

    summary: SummaryConfig = SummaryConfig()
    """The walkthrough that opens the summary comment."""

    def path_filter(self) -> "PathFilter":
        return PathFilter(self.paths)

    def ignores_author(self, login: str) -> bool:
        return login.lower() in {a.lower() for a in self.ignore_authors}

    def declines(self, trigger: str, pull: PullFacts) -> str | None:
        """Why the pull request event `trigger` on `pull` gets no automatic review, if it gets
        none: Tiebreak turned off, another event, a draft, an ignored author, branch, title or
        label."""
        if not self.enabled:
            return "Tiebreak is turned off for this repository"
        if trigger not in set(self.triggers):
            return f"the config does not review on {trigger!r}"
        if pull.draft and not self.review_drafts:
            return "drafts are reviewed once they are ready"
        if self.ignores_author(pull.author):
            return f"the config ignores pull requests by {pull.author}"
        return self.ignore.ignores(pull)


class PathFilter:
    """Decides which changed files a review covers."""

    def __init__(self, paths: Paths) -> None:
        self._include = compiled(paths.include)
        self._exclude = compiled(paths.exclude)

    def reviews(self, path: str) -> bool:
        return self._include.match(path) and not self._exclude.match(path)


def parse_config(text: str) -> tuple[RepoConfig, list[ConfigProblem]]:
    """The config a file's text describes, and what is wrong with it, in line order.

    An empty file gives the defaults; a file with any problem gives the defaults and its
    problems: a half-applied config would be harder to reason about than none. A warning
    (:attr:`ConfigProblem.warning`) leaves the config as written.
    """
    return layered_config(text, None, "")


def layered_config(
    own: str | None, defaults: str | None, defaults_source: str
) -> tuple[RepoConfig, list[ConfigProblem]]:
    """A repository's config: its own file's text `own` over its organisation's `defaults`
    (the text of the file named `defaults_source`), each None when there is no such file.

    The own file overrides the defaults key by key: mappings are merged, key by key at
    every depth, and any other value (a list, a scalar) replaces the default's. Defaults
    with a problem are left out, and said so; an own file with a problem, or whose values
    make the merged config invalid, is left out for the defaults alone, as a file alone
    is for the built-in defaults.
    """
    org = read_document(defaults or "")
    org_config, org_found = _checked(org)
    # Valid defaults' warnings are found again below, where the own file has not replaced them.
    org_problems = [replace(p, source=defaults_source) for p, _ in org_found if not p.warning]
    org_values = {} if org_problems else org.values or {}
    mine = read_document(own or "")
    if mine.values is None and mine.problems:
        return org_config, _in_order([*org_problems, *mine.problems])
    merged = Document(_merged(org_values, mine.values or {}), mine.root, mine.problems)
    config, found = _checked(merged)
    problems = list(org_problems)
    for problem, loc in found:
        if loc is not None and org_values and not _has(mine.values or {}, loc):
            problem = replace(problem, source=defaults_source, line=line_of(org.root, loc))
        problems.append(problem)
    if any(not p.warning for p, _ in found):
        return org_config, _in_order(problems)
    return config, _in_order(problems)


_Found = list[tuple[ConfigProblem, tuple[Any, ...] | None]]


def _checked(document: Document) -> tuple[RepoConfig, _Found]:
    """`document` validated as a config, and its problems with the option each is about
    (its warnings, when it is valid); the defaults when it has a problem."""
    found: _Found = [(p, None) for p in document.problems]
    values = document.values
    if values is None:
        return RepoConfig(), found
    # Read off the file as written, so that a config with problems is warned about too.
    logins = values.get("ignore_authors")
    texts = logins if isinstance(logins, list) and all(isinstance(x, str) for x in logins) else []
    warned: _Found = [
        (ConfigProblem(said, line_of(document.root, loc), warning=True), loc)
        for said, loc in unmarked_bots(texts)
    ]
    try:
        config = RepoConfig.model_validate(values)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(_as_written(error["loc"], values))
            words = problem_words(RepoConfig, error, dotted(loc))
            found.append((ConfigProblem(words, line_of(document.root, loc)), loc))
        return RepoConfig(), found + warned
    if found:
        return RepoConfig(), found + warned
    return config, warned


def _merged(defaults: dict[Any, Any], own: dict[Any, Any]) -> dict[Any, Any]:
    """`own` over `defaults`: mappings merged at every depth, other values replaced."""
    merged = dict(defaults)
    for key, value in own.items():
        below = merged.get(key)
        both = isinstance(below, dict) and isinstance(value, dict)
        merged[key] = _merged(below, value) if both else value  # type: ignore[arg-type]
    return merged


def _has(values: Any, loc: Sequence[Any]) -> bool:
    """Whether `values` holds the option at `loc`, or a value replacing the option's."""
    for key in loc:
        if isinstance(values, dict) and key in values:
            values = values[key]
        else:
            return isinstance(values, list)  # a list replaces the default's whole
    return True


def _in_order(problems: list[ConfigProblem]) -> list[ConfigProblem]:
    """The repository's own file's problems by line, then its defaults'."""
    return sorted(problems, key=lambda p: (p.source or "", p.line or 0))


def _as_written(loc: Sequence[Any], document: dict[Any, Any]) -> Sequence[Any]:
    """`loc` as the file writes it: in the short form of `learnings`, a list, its rules are
    the section itself."""
    short = isinstance(document.get("learnings"), list)
    return ("learnings", *loc[2:]) if short and tuple(loc[:2]) == ("learnings", "rules") else loc
