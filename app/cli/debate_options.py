"""The debate's options of `tiebreak review`, each a field of :class:`DebatePolicy`: their
click types read off the field's bounds and choices, so that `--help` shows each bound and a
value out of bounds is refused naming the option as typed, the rule and the value, with
click's usage error (status 2); and the policy's rules between fields told in the options'
names."""

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import annotated_types
import click
from pydantic import ValidationError

from policies.debate import DebatePolicy
from policies.panel import Focus

F = TypeVar("F", bound=Callable[..., object])

DEFAULTS = DebatePolicy()


@dataclass(frozen=True)
class DebateOption:
    """One option: how it is typed, the policy's field it sets, its help."""

    flag: str
    field: str
    help: str


OPTIONS = (
    DebateOption(
        "--max-rounds",
        "max_rounds",
        f"Rounds before open findings go to the arbiter (default {DEFAULTS.max_rounds}).",
    ),
    DebateOption(
        "--budget",
        "initial_budget",
        f"Starting token budget of the coder-tester edge (default {DEFAULTS.initial_budget:,}).",
    ),
    DebateOption(
        "--ceiling",
        "token_ceiling",
        f"Hard token ceiling of the whole review (default {DEFAULTS.token_ceiling:,}).",
    ),
    DebateOption("--testers", "testers", "Testers on the panel (default 1)."),
    DebateOption(
        "--focus",
        "focus",
        "A tester's focus, once per tester in order: " + ", ".join(Focus) + ".",
    ),
)
FLAGS = {option.field: option.flag for option in OPTIONS} | {"arbitration": "--no-arbitration"}
"""The option that sets each field, `--no-arbitration` (a flag, never out of bounds) too."""


class BoundedInt(click.IntRange):
    """A whole number within a field's bounds, said as the config's errors say them."""

    name = "integer"

    def _describe_range(self) -> str:
        if self.min is not None and self.max is not None:
            return f"from {self.min:,} to {self.max:,}"
        return f"at least {self.min:,}" if self.min is not None else f"at most {self.max:,}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.INT.convert(value, param, ctx)
        if (self.min is not None and number < self.min) or (
            self.max is not None and number > self.max
        ):
            bounds = self._describe_range()
            bounds = bounds if bounds.startswith("from") else f"of {bounds}"
            self.fail(f"must be a whole number {bounds}, not {number}", param, ctx)
        return number


def _type(field: str) -> click.ParamType[Any]:
    info = DebatePolicy.model_fields[field]
    if info.annotation is int:
        low = next((m.ge for m in info.metadata if isinstance(m, annotated_types.Ge)), None)
        high = next((m.le for m in info.metadata if isinstance(m, annotated_types.Le)), None)
        return BoundedInt(min=low, max=high)  # type: ignore[arg-type]
    if field == "focus":
        return click.Choice([focus.value for focus in Focus])
    raise TypeError(f"no option type for the debate's {field}")


def debate_options(command: F) -> F:
    """The options of :data:`OPTIONS`, given to `command` as one mapping, `debate`: each
    field set, by its name."""

    @functools.wraps(command)
    def with_debate(**given: Any) -> object:
        values = {o.field: given.pop(o.field) for o in OPTIONS}
        debate = {field: value for field, value in values.items() if value not in (None, ())}
        return command(**given, debate=debate)

    for option in reversed(OPTIONS):
        multiple = option.field == "focus"
        with_debate = click.option(
            option.flag,
            option.field,
            type=_type(option.field),
            multiple=multiple,
            metavar="FOCUS" if multiple else None,
            help=option.help,
        )(with_debate)
    return with_debate  # type: ignore[return-value]


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
