"""The per-repository config file, `.github/tiebreak.yml`, read from the base branch.

A frozen model that refuses unknown keys. A file that cannot be read as this model never
breaks a review: the review runs on the defaults and says what was wrong.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from policies.debate import DebatePolicy

CONFIG_PATH = ".github/tiebreak.yml"


class RepoConfig(BaseModel):
    """What a repository may tune."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Whether Tiebreak reviews this repository's pull requests."""

    debate: DebatePolicy = DebatePolicy()
    """The debate's limits."""


def load_config(document: Any) -> tuple[RepoConfig, list[str]]:
    """The config a parsed YAML document describes, and the problems found in it.

    An empty document gives the defaults; an invalid one gives the defaults and the problems.
    """
    if document is None:
        return RepoConfig(), []
    if not isinstance(document, dict):
        return RepoConfig(), [f"{CONFIG_PATH} must be a mapping of options"]
    try:
        return RepoConfig.model_validate(document), []
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
        return RepoConfig(), problems
