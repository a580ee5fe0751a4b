"""The per-repository config file, `.github/tiebreak.yml`, read from the base branch.

A frozen model that refuses unknown keys; its JSON Schema is `docs/config.schema.json` and
the README's reference is generated from it (`tiebreak config-docs`). A file that cannot be
read as this model never breaks a review: :func:`parse_config` gives the defaults and says
what is wrong, and on which line.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from policies.debate import DebatePolicy
from policies.globs import compiled, plain_globs
from policies.guidance import (
    MAX_GUIDELINES,
    ContextOptions,
    GuidelinePath,
    Instructions,
    PathInstruction,
)
from policies.hearing import HearingPolicy
from policies.learnings import LearningsConfig
from policies.summary import SummaryConfig
from policies.verification import VerifyConfig

CONFIG_PATH = ".github/tiebreak.yml"
MAX_CONFIG_BYTES = 64 * 1024
"""A larger config file is refused unread."""
MAX_CONFIG_NODES = 10_000
"""Values a config may hold once its aliases are expanded: a few aliases of aliases could
otherwise stand for billions."""
MAX_CONFIG_DEPTH = 32
"""Levels a config's values may nest; PyYAML recurses once per level while reading."""


class Trigger(StrEnum):
    """Pull request events that start a review by themselves."""

    OPENED = "opened"
    REOPENED = "reopened"
    SYNCHRONIZE = "synchronize"
    """A push to the pull request's branch."""
    READY_FOR_REVIEW = "ready_for_review"
    """A draft marked ready for review."""


Login = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")
]
MODEL_ID = (
    r"^(?:[a-z0-9][a-z0-9.:@-]{0,99}"
    r"|arn:aws[a-z-]*:bedrock:[a-z0-9-]+:[0-9]{12}:[a-z-]+/[A-Za-z0-9.:-]{1,120})$"
)
"""A model as Anthropic's API (`claude-sonnet-5-5`), Vertex AI (`claude-sonnet-5-5@20260101`) or
Bedrock names it: a model or inference profile id (`us.anthropic.claude-sonnet-5-5`), or the ARN
of an inference profile or of provisioned throughput."""
ModelName = Annotated[str, StringConstraints(pattern=MODEL_ID)]
Globs = Annotated[tuple[str, ...], AfterValidator(plain_globs)]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Paths(_Section):
    """Which changed files are reviewed: gitignore-style globs, matched against each path."""

    include: Annotated[Globs, Field(min_length=1)] = ("**",)
    """Files to review; a file must match one of these."""

    exclude: Globs = ()
    """Files never reviewed, even when included (lock files, generated code, vendored code)."""


class Models(_Section):
    """The model each role runs on, named as the server's provider names it (Anthropic's API
    and Vertex AI: `claude-sonnet-5-5`; Bedrock: `us.anthropic.claude-sonnet-5-5`, or an
    inference profile's ARN); unset roles use the server's default model."""

    tester: ModelName | None = None
    """The model that raises findings."""

    coder: ModelName | None = None
    """The model that answers them with patches or arguments."""

    arbiter: ModelName | None = None
    """The model that rules on deadlocks."""


class RepoConfig(_Section):
    """What a repository may tune."""

    enabled: bool = True
    """Whether Tiebreak reviews this repository's pull requests at all."""

    triggers: tuple[Trigger, ...] = tuple(Trigger)
    """Pull request events that start a review automatically. `/tiebreak review` works
    whatever this says; an empty list means reviews only on request."""

    review_drafts: bool = False
    """Whether draft pull requests are reviewed automatically (otherwise, once marked ready)."""

    ignore_authors: tuple[Login, ...] = ("dependabot[bot]", "renovate[bot]")
    """Logins whose pull requests are not reviewed automatically (case-insensitive)."""

    paths: Paths = Paths()
    """Which changed files are reviewed."""

    min_severity: Literal["blocker", "major", "minor", "nit"] = "nit"
    """The least severe finding that is posted; less severe findings are only counted."""

    max_inline_comments: int = Field(default=10, ge=0, le=100)
    """Inline comments per review, most severe first; the rest are listed in the summary."""

    label: Annotated[str, StringConstraints(pattern=r"^[^\s,](?:[^,\n]{0,48}[^\s,])?$")] = (
        "Unresolved"
    )
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

    learnings: LearningsConfig = LearningsConfig()
    """What the repository's people taught Tiebreak, and whether it learns."""

    summary: SummaryConfig = SummaryConfig()
    """The walkthrough that opens the summary comment."""

    def path_filter(self) -> "PathFilter":
        return PathFilter(self.paths)

    def ignores_author(self, login: str) -> bool:
        return login.lower() in {a.lower() for a in self.ignore_authors}

    def declines(self, trigger: str, *, draft: bool, author: str) -> str | None:
        """Why the pull request event `trigger` gets no automatic review, if it gets none:
        Tiebreak turned off, another event, a draft, an ignored author."""
        if not self.enabled:
            return "Tiebreak is turned off for this repository"
        if trigger not in set(self.triggers):
            return f"the config does not review on {trigger!r}"
        if draft and not self.review_drafts:
            return "drafts are reviewed once they are ready"
        if self.ignores_author(author):
            return f"the config ignores pull requests by {author}"
        return None


class PathFilter:
    """Decides which changed files a review covers."""

    def __init__(self, paths: Paths) -> None:
        self._include = compiled(paths.include)
        self._exclude = compiled(paths.exclude)

    def reviews(self, path: str) -> bool:
        return self._include.match(path) and not self._exclude.match(path)


@dataclass(frozen=True)
class ConfigProblem:
    """Something wrong with a config file, and the line it is on (1-based) when known."""

    message: str
    line: int | None = None

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


def parse_config(text: str) -> tuple[RepoConfig, list[ConfigProblem]]:
    """The config a file's text describes, and what is wrong with it.

    An empty file gives the defaults; a file with any problem gives the defaults and its
    problems: a half-applied config would be harder to reason about than none.
    """
    if len(text.encode()) > MAX_CONFIG_BYTES:
        return RepoConfig(), [ConfigProblem(f"the file is larger than {MAX_CONFIG_BYTES:,} bytes")]
    try:
        root = yaml.compose(text, Loader=_Loader)
        # Before the document is built: building expands merge keys (`<<: [*a, *a]`), which
        # a few lines can make exponential.
        if _expanded_size(root) > MAX_CONFIG_NODES:
            return RepoConfig(), [
                ConfigProblem(f"the file holds more than {MAX_CONFIG_NODES:,} values")
            ]
        document = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        reason = " ".join(str(getattr(exc, "problem", None) or exc).split())
        return RepoConfig(), [
            ConfigProblem(f"the file is not valid YAML: {reason}", _clamped(mark, text))
        ]
    if document is None or root is None:
        return RepoConfig(), []
    if not isinstance(document, dict):
        line = root.start_mark.line + 1
        return RepoConfig(), [ConfigProblem("the file must be a mapping of options", line)]
    problems = [
        ConfigProblem(f"{_dotted(path)} is set twice", node.start_mark.line + 1)
        for path, node in _duplicates(root, ())
    ]
    try:
        config = RepoConfig.model_validate(document)
    except ValidationError as exc:
        locs = [(_as_written(err["loc"], document), err["msg"]) for err in exc.errors()]
        problems += [ConfigProblem(f"{_dotted(loc)}: {msg}", _line(root, loc)) for loc, msg in locs]
    return (RepoConfig(), problems) if problems else (config, [])


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing values nested deeper than :data:`MAX_CONFIG_DEPTH`
    and turning a scalar it cannot build (`2001-13-01`, `!!int x`, an integer of 5,000
    digits) into a YAML error on its line: both would otherwise escape as a `RecursionError`
    or a `ValueError`, and a config file must never break a review."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self._depth >= MAX_CONFIG_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, f"values nest more than {MAX_CONFIG_DEPTH} levels deep", mark
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except ValueError as exc:
            raise yaml.constructor.ConstructorError(None, None, str(exc), node.start_mark) from exc


def _clamped(mark: yaml.Mark | None, text: str) -> int | None:
    """The 1-based line of `mark`, which PyYAML may put just past the last line (an unclosed
    bracket): an annotation must sit on a line the file has."""
    if mark is None:
        return None
    return max(1, min(mark.line + 1, len(text.splitlines())))


def _as_written(loc: Sequence[Any], document: dict[Any, Any]) -> Sequence[Any]:
    """`loc` as the file writes it: in the short form of `learnings`, a list, its rules are
    the section itself."""
    short = isinstance(document.get("learnings"), list)
    return ("learnings", *loc[2:]) if short and tuple(loc[:2]) == ("learnings", "rules") else loc


def _dotted(loc: Sequence[Any]) -> str:
    return ".".join(str(p) for p in loc) or "the file"


def _line(node: yaml.Node | None, loc: Sequence[Any]) -> int | None:
    """The line of the deepest key or item along `loc` that the file has: a key's own line,
    not its value's, which may start lines below it."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == key), None)
            at, node = pair or (None, None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            at = node = node.value[key] if key < len(node.value) else None
        else:
            at = node = None
        if at is None:
            break
        line = at.start_mark.line + 1
    return line


def _expanded_size(root: yaml.Node | None) -> int:
    """How many nodes the document has with its aliases expanded, counting no further than
    just past :data:`MAX_CONFIG_NODES`."""
    count, stack = 0, [root] if root is not None else []
    while stack and count <= MAX_CONFIG_NODES:
        node = stack.pop()
        count += 1
        if isinstance(node, yaml.MappingNode):
            stack += [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
    return count


def _duplicates(node: yaml.Node | None, path: tuple[Any, ...]) -> Iterator[tuple[Any, yaml.Node]]:
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key, value in node.value:
            if key.value in seen:
                yield (*path, key.value), key
            seen.add(key.value)
            yield from _duplicates(value, (*path, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _duplicates(item, (*path, i))
