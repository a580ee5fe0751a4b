"""The debate's options of `tiebreak review` (:mod:`app.cli.debate_options`) made into the
review's :class:`DebatePolicy`, the policy's rules between fields told in the options' names."""

import re
from collections.abc import Mapping

import click
from pydantic import ValidationError

from app.cli.debate_options import FLAGS
from policies.debate import DebatePolicy

DEFAULTS = DebatePolicy()


def debate_policy(base: DebatePolicy, chosen: Mapping[str, object]) -> DebatePolicy:
    """`base` with the options `chosen` (by field); click's usage error naming the options
    when the policy's rules refuse them together."""
    try:
        return DebatePolicy.model_validate({**base.model_dump(), **chosen})
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
    named = [str(f) for f in (error.get("ctx") or {}).get("fields", error["loc"][:1])]
    given = [f for f in named if f in chosen] or [f for f in chosen if f in FLAGS][:1]
    said = error["msg"].removeprefix("Value error, ")
    for field in given:
        # The field's first mention is the option's; a later one is the word (`its own focus`).
        said = re.sub(rf"\b{re.escape(field)}\b", FLAGS[field], said, count=1)
    raise click.BadParameter(said, param_hint=[FLAGS[f] for f in given])
