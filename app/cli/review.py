"""`tiebreak review`: the trio on a local diff, the outcome in the terminal or as JSON.

The code around the changes is read from a checkout at the diff's new side
(:mod:`app.cli.checkout`); with `--verify`, the findings' tests run on it
(:mod:`app.cli.verifying`).
"""

import asyncio
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TextIO

import click
from pydantic import ValidationError

from agents.claude import ClaudeLLM
from agents.context import Reading
from agents.coverage import estimate
from agents.diff import Diff
from agents.errors import DiffError, LLMFatal
from agents.proofs import Proving
from agents.review import Review, review_units
from app.cli.checkout import checkout_sources, work_tree
from app.cli.exits import fail as _fail
from app.cli.model_choice import connect, model_options
from app.cli.terminal import Progress, render
from app.cli.verifying import VerifyRequest, proving, verify_config, verify_options
from app.parsing import Parsing
from policies.debate import DebatePolicy

EXIT_SETTLED, EXIT_UNRESOLVED = 0, 1


@click.command()
@click.argument("patch", type=click.File("r", encoding="utf-8", errors="replace"))
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON.")
@click.option("--max-rounds", type=int, help="Rounds before open findings go to the arbiter.")
@click.option("--budget", type=int, help="Starting token budget of the coder-tester edge.")
@click.option("--ceiling", type=int, help="Hard token ceiling of the whole review.")
@click.option("--no-arbitration", is_flag=True, help="Leave deadlocks unresolved.")
@click.option("--testers", type=int, help="Testers on the panel, 1 to 5 (default 1).")
@click.option(
    "--focus",
    multiple=True,
    metavar="FOCUS",
    help="A tester's focus, once per tester in order (correctness, security, performance, …).",
)
@click.option(
    "--topology",
    type=click.Choice(["ring", "full"]),
    help="Whom each panel tester hears: its two neighbours, or everyone (default ring).",
)
@click.option(
    "--repo",
    "repo_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="A checkout at the diff's new side, to read the code around each change from "
    "(default: the current directory, when it is one).",
)
@model_options
@verify_options
def review(
    patch: TextIO,
    as_json: bool,
    max_rounds: int | None,
    budget: int | None,
    ceiling: int | None,
    no_arbitration: bool,
    testers: int | None,
    focus: tuple[str, ...],
    topology: str | None,
    repo_dir: Path | None,
    tester_model: str | None,
    coder_model: str | None,
    arbiter_model: str | None,
    verify_command: str | None,
    verify_setup: str | None,
    base: str | None,
    no_sandbox: bool,
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
        "testers": testers,
        "focus": focus or None,
        "topology": topology,
    }
    try:
        policy = DebatePolicy(**{k: v for k, v in overrides.items() if v is not None})
        diff = Diff.parse(patch.read())
    except ValidationError as exc:
        _fail(f"invalid option: {_first_error(exc)}")
    except DiffError as exc:
        _fail(str(exc))
    directory = repo_dir or Path.cwd()
    sources, read = checkout_sources(diff, directory)
    verifying = VerifyRequest(verify_command, verify_setup, base, sandbox=not no_sandbox)
    checkout = work_tree(directory) if sources is not None else None
    config = verify_config(verifying, checkout, read)
    llm = connect(tester_model, coder_model, arbiter_model)
    if sources is None:
        click.echo(
            f"tiebreak: reviewing the diff alone, without the code around it: {read}", err=True
        )
    else:
        click.echo(f"tiebreak: {read}", err=True)
    try:
        result = asyncio.run(
            _review(diff, llm, policy, sources, proving(verifying, config, checkout, diff))
        )
    except LLMFatal as exc:
        _fail(str(exc))
    click.echo(result.model_dump_json(indent=2) if as_json else render(result))
    sys.exit(EXIT_SETTLED if result.settled else EXIT_UNRESOLVED)


async def _review(
    diff: Diff,
    llm: ClaudeLLM,
    policy: DebatePolicy,
    sources: dict[str, str] | None,
    proofs: AbstractAsyncContextManager[Proving | None],
) -> Review:
    parsing = Parsing()
    try:
        outlines = await parsing.outlines(sources) if sources else {}
        units = Reading(sources, outlines=outlines).attach(diff.units())
        async with proofs as proving:
            expected = estimate(units, policy, tests=proving is not None)
            click.echo(f"tiebreak: {expected.describe()}", err=True)
            progress = Progress(llm, lambda line: click.echo(line, err=True), [u.id for u in units])
            review = await review_units(units, progress, policy, proving=proving)
            return review.model_copy(update={"estimate": expected})
    finally:
        parsing.close()
        await llm.aclose()


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
