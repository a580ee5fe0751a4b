"""The debate's options of `tiebreak review`, each a field of :class:`DebatePolicy`, typed
with the field's bounds and choices, so that `--help` shows each bound and a value out of
bounds is refused naming the option as typed, the rule and the value, with click's usage error
(status 2). The bounds are the constants the policy's fields are declared with
(:mod:`policies.defaults`), so that the help and a usage error load neither pydantic nor the
config's schema; the policy's rules between fields are :mod:`app.cli.debate_choice`'s."""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from policies.defaults import (
    BUDGET_FLOOR,
    INITIAL_BUDGET,
    MAX_ROUNDS,
    MAX_ROUNDS_LIMIT,
    TOKEN_CEILING,
    TOKEN_CEILING_FLOOR,
)
from policies.panel import MAX_TESTERS, Focus

F = TypeVar("F", bound=Callable[..., object])


@dataclass(frozen=True)
class DebateOption:
    """One option: how it is typed, the policy's field it sets, its help, and the bounds of a
    whole number (those of the policy's field)."""

    flag: str
    field: str
    help: str
    low: int | None = None
    high: int | None = None

    def click_type(self) -> click.ParamType[Any]:
        """What click reads the option's value as: a focus, or a whole number in bounds."""
        if self.field == "focus":
            return click.Choice([focus.value for focus in Focus])
        return BoundedInt(min=self.low, max=self.high)


OPTIONS = (
    DebateOption(
        "--max-rounds",
        "max_rounds",
        f"Rounds before open findings go to the arbiter (default {MAX_ROUNDS}).",
        low=1,
        high=MAX_ROUNDS_LIMIT,
    ),
    DebateOption(
        "--budget",
        "initial_budget",
        f"Starting token budget of the coder-tester edge (default {INITIAL_BUDGET:,}).",
        low=BUDGET_FLOOR,
    ),
    DebateOption(
        "--ceiling",
        "token_ceiling",
        f"Hard token ceiling of the whole review (default {TOKEN_CEILING:,}).",
        low=TOKEN_CEILING_FLOOR,
    ),
    DebateOption(
        "--testers", "testers", "Testers on the panel (default 1).", low=1, high=MAX_TESTERS
    ),
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
            type=option.click_type(),
            multiple=multiple,
            metavar="FOCUS" if multiple else None,
            help=option.help,
        )(with_debate)
    return with_debate  # type: ignore[return-value]
