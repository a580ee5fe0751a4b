"""What a repository's people taught Tiebreak, and which of it a review unit's agents read.

A learning is one short rule in plain words and the globs of the files it applies to. Tiebreak
records one when a finding is withdrawn after a person's reply, refused with 👎 by someone who
may write to the repository, or resolved by `/tiebreak resolve <reason>`: the tester writes the
rule from the thread. Only people who may write teach the repository: a reply by anyone else
(the author of a pull request from a fork) teaches its own pull request alone. A repository
may also write learnings in its config (`learnings` in `.github/tiebreak.yml`), reviewed in git
like the rest of it.

Learnings are guidance (:mod:`policies.guidance`): a unit's agents read those whose globs match
one of its files — the config's first, then the most recent — within a budget of tokens, as
data inside the guidance block, subordinate to the rules. Nothing in the config or the
debate's policy is ever read from one: a learning cannot change a limit, the protected paths,
who may steer Tiebreak or the protocol.
"""

import math
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from policies.config_section import ConfigSection, Switch
from policies.config_wording import Shape
from policies.globs import CompiledGlobs, compiled, listed_globs

MAX_RULE_CHARS = 300
"""Characters of one rule: a sentence or two, never a document."""
MAX_RULE_SENTENCES = 2
MAX_LEARNING_GLOBS = 10
MAX_CONFIG_RULES = 50
MAX_LEARNINGS = 200
"""Learnings a repository keeps: past it, the oldest is dropped (and the reply that records
the new one says so)."""
MAX_PULL_LEARNINGS = 20
"""Learnings a pull request keeps for itself alone (taught by people who may not write to
the repository): past it, the oldest is dropped."""
MAX_LEARNING_TOKENS = 8_000
"""The most `learnings.max_tokens` may ask for, per review unit."""
DEFAULT_LEARNING_TOKENS = 1_000
CHARS_PER_TOKEN = 4
"""The estimate `agents.models.tokens` makes of prose; the budget is a bound, not a count."""

# A sentence ends at `.`, `!` or `?` followed by a space and a capital: "e.g. cents" is one.
SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z])")


def _rule(text: str) -> str:
    rule = " ".join(text.split())
    if not rule:
        raise ValueError("a rule may not be empty")
    if len(rule) > MAX_RULE_CHARS:
        raise ValueError(f"a rule is at most {MAX_RULE_CHARS} characters, not {len(rule)}")
    if len(SENTENCE_END.findall(rule)) >= MAX_RULE_SENTENCES:
        raise ValueError("a rule is one sentence or two, no more")
    return rule


def _globs(globs: tuple[str, ...]) -> tuple[str, ...]:
    listed_globs(globs)
    return globs


Rule = Annotated[str, AfterValidator(_rule), Field(json_schema_extra={"maxLength": MAX_RULE_CHARS})]
"""One rule in plain words, on one line: whitespace runs are folded to one space."""
LearningGlobs = Annotated[
    tuple[str, ...],
    Field(min_length=1, max_length=MAX_LEARNING_GLOBS),
    AfterValidator(_globs),
    Shape("a list of globs (gitignore-style, such as 'src/**')"),
]


class LearningSource(StrEnum):
    """How a learning was taught."""

    WITHDRAWN = "withdrawn"
    """A person's reply convinced the tester, and the finding was withdrawn."""
    THUMBS_DOWN = "thumbs_down"
    """Someone with write access reacted 👎 to a finding."""
    RESOLVED = "resolved"
    """Someone with write access resolved the pull request with a reason, in a finding's
    thread."""
    CONFIG = "config"
    """Written in the repository's config."""


class Learning(BaseModel):
    """One learning, as the repository keeps it and its reviews apply it."""

    model_config = ConfigDict(frozen=True)

    number: int | None = None
    """Its number in the repository (`/tiebreak forget N`); None for the config's."""
    rule: Rule
    paths: LearningGlobs
    source: LearningSource
    taught_by: str = ""
    """The login of who taught it (empty for the config's)."""
    taught_at: datetime | None = None
    thread_url: str = ""
    """The finding's thread it was taught on (empty for the config's)."""
    pull: int | None = None
    """The pull request it applies to alone, when who taught it may not write to the
    repository; None for the repository's (and the config's)."""

    @property
    def label(self) -> str:
        """How the agents and people see it named: `#12`, or `config`."""
        return "config" if self.number is None else f"#{self.number}"

    def shown(self) -> str:
        """The learning as the agents read it, on one line."""
        return f"- [{self.label}; {', '.join(self.paths)}] {self.rule}"


class LearnedRule(ConfigSection):
    """A learning written in the config."""

    rule: Rule
    """One rule in plain words, one sentence or two, at most 300 characters."""

    paths: LearningGlobs = ("**",)
    """The files it applies to, gitignore-style globs (every file by default)."""

    def learning(self) -> Learning:
        return Learning(rule=self.rule, paths=self.paths, source=LearningSource.CONFIG)


class LearningsConfig(ConfigSection):
    """What the repository's people taught Tiebreak: the rules it learned from them (a finding
    withdrawn after a reply, a 👎 from someone with write access, `/tiebreak resolve <reason>`
    in a finding's thread), and rules written here. Later reviews give those matching a
    unit's files to its tester, coder and arbiter as the repository's guidance. Written as a
    mapping, or as the list of `rules` alone (`learnings: [{rule: ..., paths: [...]}]`)."""

    enabled: Switch = True
    """Whether Tiebreak learns from people, and gives later reviews what it learned; off,
    nothing is learned and no learning is applied, these `rules` included."""

    max_tokens: int = Field(default=DEFAULT_LEARNING_TOKENS, ge=0, le=MAX_LEARNING_TOKENS)
    """Tokens of learnings each review unit's agents read: these `rules` first, then the most
    recent learned; those that do not fit are left out."""

    rules: tuple[LearnedRule, ...] = Field(default=(), max_length=MAX_CONFIG_RULES)
    """Learnings reviewed in git: a list of `{rule, paths}` (`tiebreak learnings export`
    prints the learned ones in this form)."""

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        return {"rules": data} if isinstance(data, list) else data

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # The short form is valid YAML for the file too: an editor must not flag it.
        mapping = handler(core_schema)
        rules = handler.resolve_ref_schema(mapping)["properties"]["rules"]
        short = {"type": "array", "items": rules["items"], "maxItems": MAX_CONFIG_RULES}
        return {"anyOf": [mapping, short]}


class Learnings:
    """The learnings a review applies, in the order they are read: the config's, then the
    learned ones most recent first; each unit reads those matching its files, within
    `max_tokens`."""

    def __init__(self, learnings: Iterable[Learning] = (), max_tokens: int = 0) -> None:
        self.max_tokens = max_tokens
        # Compiled once per review and kept here, not in the globs' shared cache, which a
        # repository's many learnings would sweep out at every unit.
        self._matched: list[tuple[Learning, CompiledGlobs]] = [
            (learning, compiled(learning.paths)) for learning in learnings
        ]

    @classmethod
    def of(cls, config: LearningsConfig, learned: Iterable[Learning]) -> "Learnings":
        """The config's rules and the `learned` ones, most recent first; none when the
        config turns learning off."""
        if not config.enabled:
            return cls()
        recent = sorted(learned, key=lambda item: item.number or 0, reverse=True)
        return cls([*(r.learning() for r in config.rules), *recent], config.max_tokens)

    def __bool__(self) -> bool:
        return bool(self._matched)

    def for_paths(self, paths: Sequence[str]) -> list[Learning]:
        """Those matching one of `paths`, in order, as many as fit the budget: one that does
        not fit is left out and the next may still fit."""
        chosen: list[Learning] = []
        spent = 0
        for learning, globs in self._matched:
            if not any(globs.match(path) for path in paths):
                continue
            cost = math.ceil(len(learning.shown()) / CHARS_PER_TOKEN)
            if spent + cost <= self.max_tokens:
                chosen.append(learning)
                spent += cost
        return chosen


def directory_glob(path: str) -> str:
    """The default scope of a learning taught on `path`: its directory, or the file itself at
    the repository's root (a glob for the whole repository would be no default). The path's
    characters are matched as they are, never read as wildcards."""
    directory, _, name = path.rpartition("/")
    return f"{_literal(directory)}/**" if directory else f"/{_literal(name)}"


def _literal(path: str) -> str:
    """`path` as a gitignore pattern matching exactly it."""
    escaped = _WILDCARDS.sub(r"\\\g<0>", path)
    if escaped.startswith(("!", "#")):
        escaped = "\\" + escaped
    stripped = escaped.rstrip(" ")
    return stripped + "\\ " * (len(escaped) - len(stripped))


_WILDCARDS = re.compile(r"[\\*?\[]")
