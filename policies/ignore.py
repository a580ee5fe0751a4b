"""The config's `ignore` section: pull requests that get no automatic review.

A pull request into one of `base_branches`, from one of `head_branches`, with a title matching
one of `title_patterns` or carrying one of `labels` is not reviewed on its own, as a pull
request by one of `ignore_authors` is not; a person's `/tiebreak review` still reviews it.
"""

from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from policies.config_section import ConfigSection
from policies.config_wording import Shape
from policies.globs import compiled, compiled_titles, listed_globs, title_patterns

_BranchGlobs = Annotated[
    tuple[str, ...],
    AfterValidator(listed_globs),
    Shape("a list of branch globs (gitignore-style, such as 'release/**')"),
]
_TitlePatterns = Annotated[
    tuple[str, ...],
    AfterValidator(title_patterns),
    Shape("a list of title patterns ('*' for any text, such as '[WIP]*')"),
]
_LabelName = Annotated[str, StringConstraints(min_length=1, max_length=50)]


@dataclass(frozen=True)
class PullFacts:
    """What the config's rules for automatic reviews look at in a pull request."""

    author: str
    draft: bool = False
    base_branch: str = ""
    head_branch: str = ""
    title: str = ""
    labels: tuple[str, ...] = ()


class IgnoreFilters(ConfigSection):
    """Pull requests not reviewed automatically; `/tiebreak review` still reviews them."""

    base_branches: _BranchGlobs = ()
    """Branches, as gitignore-style globs, whose incoming pull requests are not reviewed
    (`release/**`, `gh-pages`)."""

    head_branches: _BranchGlobs = ()
    """Branches, as gitignore-style globs, whose pull requests are not reviewed
    (`dependabot/**`, `wip/*`)."""

    title_patterns: _TitlePatterns = ()
    """Titles not reviewed, each pattern matched against the whole title, ignoring case: `*`
    stands for any text, `?` for one character, anything else for itself (`[WIP]*`,
    `*do not review*`)."""

    labels: tuple[_LabelName, ...] = Field(default=(), max_length=100)
    """Labels whose pull requests are not reviewed (exact names, ignoring case)."""

    def ignores(self, pull: PullFacts) -> str | None:
        """Why `pull` gets no automatic review by these filters, if it gets none."""
        if self.base_branches and compiled(self.base_branches).match(pull.base_branch):
            return f"the config ignores pull requests into {pull.base_branch}"
        if self.head_branches and compiled(self.head_branches).match(pull.head_branch):
            return f"the config ignores pull requests from {pull.head_branch}"
        pattern = compiled_titles(self.title_patterns).first_match(pull.title)
        if pattern is not None:
            return f"the config ignores titles like {pattern!r}"
        wanted = {label.lower() for label in self.labels}
        label = next((x for x in pull.labels if x.lower() in wanted), None)
        if label is not None:
            return f"the config ignores pull requests labelled {label!r}"
        return None
