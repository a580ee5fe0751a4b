"""The model a command runs on: the options `tiebreak review` and `tiebreak eval` share, and
the client they connect with (the key and base URL from the settings)."""

from collections.abc import Callable
from typing import TypeVar

import click

from agents.claude import ClaudeLLM, RoleModels
from app.cli.exits import fail
from app.settings import get_settings

F = TypeVar("F", bound=Callable[..., object])


def model_options(command: F) -> F:
    """`--tester-model`, `--coder-model`, `--arbiter-model`."""
    for role in ("arbiter", "coder", "tester"):
        command = click.option(f"--{role}-model", help=f"Model of the {role}.")(command)
    return command


def role_models(tester: str | None, coder: str | None, arbiter: str | None) -> RoleModels:
    """The options' models, defaults for those unset. Raises pydantic's ValidationError."""
    models = {"tester": tester, "coder": coder, "arbiter": arbiter}
    return RoleModels(**{k: v for k, v in models.items() if v})


def connect(models: RoleModels) -> ClaudeLLM:
    """The Claude client of the settings' key, or exit 2 when there is no key."""
    settings = get_settings()
    if settings.anthropic_api_key is None:
        fail("ANTHROPIC_API_KEY is not set")
    return ClaudeLLM.connect(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        models=models,
    )
