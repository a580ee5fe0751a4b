"""The model a command runs on: the options `tiebreak review` and `tiebreak eval` share, and
the client they connect with, on the provider the settings name.

The options load click alone, for the commands' help; the client (the model's SDK, the
settings) is loaded when a command connects.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from app.cli.exits import fail

if TYPE_CHECKING:
    from agents.models.claude import ClaudeLLM

F = TypeVar("F", bound=Callable[..., object])


def model_options(command: F) -> F:
    """`--tester-model`, `--coder-model`, `--arbiter-model`."""
    for role in ("arbiter", "coder", "tester"):
        command = click.option(f"--{role}-model", help=f"Model of the {role}.")(command)
    return command


def connect(
    tester: str | None, coder: str | None, arbiter: str | None, *, hint: str = ""
) -> "ClaudeLLM":
    """The Claude client of the settings' provider, each role on the model its option names
    or else on the server's (`TIEBREAK_MODEL`, in the provider's naming); exit 2 when a model
    is no id the provider takes or a setting the provider needs is missing (saying so, then
    `hint`). A person waits on the command: a first call that fails ends it, said at once
    (`decides_at_first`)."""
    from pydantic import ValidationError

    from agents.models.claude import RoleModels
    from agents.models.providers import model_fault
    from app.settings import get_settings, settings_problem

    try:
        settings = get_settings()
    except ValidationError as exc:
        fail(settings_problem(exc))
    if missing := settings.model_missing():
        fail(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set{hint}")
    chosen = {"tester": tester, "coder": coder, "arbiter": arbiter}
    for role, model in chosen.items():
        if model and (fault := model_fault(settings.tiebreak_provider, model)):
            fail(f"invalid option: --{role}-model: {fault}")
    models = {role: model or settings.tiebreak_model for role, model in chosen.items()}
    return settings.claude(RoleModels(**models), decides_at_first=True)
