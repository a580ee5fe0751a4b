"""The `tiebreak` command line."""

import asyncio
import sys
from typing import NoReturn, TextIO

import click
from pydantic import ValidationError

from agents.claude import ClaudeLLM, RoleModels
from agents.diff import Diff
from agents.errors import DiffError, LLMFatal
from agents.review import Review, review_diff
from app.settings import get_settings
from app.terminal import Progress, render
from policies.debate import DebatePolicy

EXIT_SETTLED, EXIT_UNRESOLVED, EXIT_USAGE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tiebreak")
def main() -> None:
    """Tiebreak: pull request reviews by a tester, a coder and an arbiter who debate."""


@main.command()
@click.argument("patch", type=click.File("r", encoding="utf-8", errors="replace"))
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON.")
@click.option("--max-rounds", type=int, help="Rounds before open findings go to the arbiter.")
@click.option("--budget", type=int, help="Starting token budget of the coder-tester edge.")
@click.option("--ceiling", type=int, help="Hard token ceiling of the whole review.")
@click.option("--no-arbitration", is_flag=True, help="Leave deadlocks unresolved.")
@click.option("--tester-model", help="Model of the tester.")
@click.option("--coder-model", help="Model of the coder.")
@click.option("--arbiter-model", help="Model of the arbiter.")
def review(
    patch: TextIO,
    as_json: bool,
    max_rounds: int | None,
    budget: int | None,
    ceiling: int | None,
    no_arbitration: bool,
    tester_model: str | None,
    coder_model: str | None,
    arbiter_model: str | None,
) -> None:
    """Review a unified diff (a file, or - for standard input) with the three agents.

    Exit status: 0 when no finding is left open, 1 when findings stay unresolved or a part
    of the diff could not be reviewed, 2 for a usage or input error.
    """
    overrides = {
        "max_rounds": max_rounds,
        "initial_budget": budget,
        "token_ceiling": ceiling,
        "arbitration": False if no_arbitration else None,
    }
    models = {"tester": tester_model, "coder": coder_model, "arbiter": arbiter_model}
    try:
        policy = DebatePolicy(**{k: v for k, v in overrides.items() if v is not None})
        role_models = RoleModels(**{k: v for k, v in models.items() if v})
        diff = Diff.parse(patch.read())
    except ValidationError as exc:
        _fail(f"invalid option: {_first_error(exc)}")
    except DiffError as exc:
        _fail(str(exc))
    settings = get_settings()
    if settings.anthropic_api_key is None:
        _fail("ANTHROPIC_API_KEY is not set")
    llm = ClaudeLLM.connect(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        models=role_models,
    )
    try:
        result = asyncio.run(_review(diff, llm, policy))
    except LLMFatal as exc:
        _fail(str(exc))
    click.echo(result.model_dump_json(indent=2) if as_json else render(result))
    sys.exit(EXIT_SETTLED if result.settled else EXIT_UNRESOLVED)


async def _review(diff: Diff, llm: ClaudeLLM, policy: DebatePolicy) -> Review:
    progress = Progress(llm, lambda line: click.echo(line, err=True))
    try:
        return await review_diff(diff, progress, policy)
    finally:
        await llm.aclose()


def _fail(reason: str) -> NoReturn:
    click.echo(f"tiebreak: {reason}", err=True)
    sys.exit(EXIT_USAGE)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
