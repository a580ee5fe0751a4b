"""`tiebreak eval`: Tiebreak's configurations measured on labelled bugs, side by side.

`tiebreak eval CASES.jsonl` (or `tiebreak eval run CASES.jsonl`) runs them;
`tiebreak eval cases --repo DIR` builds cases from a repository's own history.
"""

import asyncio
import contextlib
import json
from collections.abc import Sequence
from pathlib import Path

import click

from agents.models.claude import ClaudeLLM
from app.cli.exits import fail
from app.cli.model_choice import connect, model_options
from app.cli.spending import EvalProgress, Plan, agree
from app.cli.verifying import eval_verify_options, eval_verifying
from app.evaluation.case_runner import CaseRunner
from app.evaluation.cases import Case, dump_case, parse_cases
from app.evaluation.checkouts import Verifying
from app.evaluation.errors import EvaluationError
from app.evaluation.history import Mining, mine_cases
from app.evaluation.report import document, summaries, table
from app.evaluation.result_files import ResultFiles
from app.evaluation.results import CaseRun, Config
from app.evaluation.scoring import DEFAULT_TOLERANCE
from app.parsing import Parsing


class _DefaultGroup(click.Group):
    """A group whose first argument, when it names no subcommand, is the `run` command's."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(
    "eval",
    cls=_DefaultGroup,
    no_args_is_help=True,
    subcommand_metavar="CASES.jsonl [OPTIONS] | cases --repo DIR",
)
def evaluate() -> None:
    """Measure whether the debate finds real bugs with fewer false alarms than one reviewer.

    \b
    tiebreak eval CASES.jsonl          run the configurations on labelled cases
    tiebreak eval cases --repo DIR     build such cases from a git history
    """


@evaluate.command("run")
@click.argument("cases_file", metavar="CASES.jsonl", type=click.Path(dir_okay=False))
@click.option(
    "--configs",
    default=",".join(Config),
    show_default=True,
    help="Configurations to run, comma-separated: single, vote, trio, panel.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    help="Billed tokens per case, the same cap for every configuration (equal cost).",
)
@click.option(
    "--jobs", type=click.IntRange(1, 64), default=1, show_default=True, help="Cases run at once."
)
@click.option("--limit", type=click.IntRange(min=1), help="Run the first N cases only.")
@click.option("--ids", metavar="ID,…", help="Run only these cases, comma-separated.")
@click.option(
    "--tolerance",
    type=click.IntRange(min=0),
    default=DEFAULT_TOLERANCE,
    show_default=True,
    help="Lines either side of a labelled bug a finding may land on and still hit it.",
)
@click.option(
    "--no-context",
    is_flag=True,
    help="Show the agents the diff alone, not the code around it from each case's files.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option(
    "--yes",
    is_flag=True,
    help="Start without asking (needed off a terminal): eval bills the model for every run.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep each case's result here as it finishes; run again to resume.",
)
@model_options
@eval_verify_options
def run(
    cases_file: str,
    configs: str,
    budget: int | None,
    jobs: int,
    limit: int | None,
    ids: str | None,
    tolerance: int,
    no_context: bool,
    as_json: bool,
    yes: bool,
    out: Path | None,
    tester_model: str | None,
    coder_model: str | None,
    arbiter_model: str | None,
    verify_command: str | None,
    verify_setup: str | None,
    checkout: Path | None,
    no_sandbox: bool,
    no_memory_limit: bool,
) -> None:
    """Run Tiebreak's configurations on CASES.jsonl with one model and compare them.

    \b
    single  one tester's report, every finding posted
    vote    three independent tester reports, findings two of them raise
    trio    the debate of a tester, a coder and an arbiter (the default review)
    panel   three testers in a ring, settled by majority

    Recall is the share of buggy cases where a posted finding hits a labelled bug;
    precision the share of findings posted on buggy cases that hit one (a lower bound);
    false alarms are findings posted on clean cases. Needs the model's settings, as
    `tiebreak review` does. The agents read the code around each change from the case's
    `files`, as the App reads it from GitHub; compare recall on the `needs_context` cases
    with and without it (`--no-context`, into another `--out`).

    With `--checkout DIR` (a clone holding the cases' commits), each case is checked out at
    its introducing commit and the agents also read what the repository's other files tell
    about each change (definitions, callers, tests). With `--verify` too, the tester backs
    its findings with tests, run at each case's base and introducing commits in a sandbox;
    the report counts the findings tested, reproduced and proven in new code (failing at
    the base only for the want of code the commit adds), and sets the precision of each
    beside the others'.

    Before the first call, eval prints the runs it has to do and the most they may bill,
    and asks whether to start; off a terminal it starts only with --yes. The tokens billed
    so far are shown as each run ends.
    """
    chosen = _configs(configs)
    cases = _select(_read_cases(cases_file), ids, limit)
    verifying = eval_verifying(
        verify_command,
        verify_setup,
        checkout,
        sandbox=not no_sandbox,
        memory_limit=not no_memory_limit,
    )
    files = _result_files(out) if out else None
    # Whatever can fail before the first call fails before the spend is asked for.
    llm = connect(tester_model, coder_model, arbiter_model)
    plan = Plan.of(cases, chosen, budget=budget, files=files, verify=verifying is not None)
    agree(plan, yes=yes)
    runs = _run_cases(
        llm, cases, chosen, EvalProgress(plan),
        budget=budget, files=files, jobs=jobs, context=not no_context, verifying=verifying,
    )  # fmt: skip
    click.echo(_report(cases, runs, tolerance, as_json=as_json))


def _run_cases(
    llm: ClaudeLLM,
    cases: Sequence[Case],
    configs: Sequence[Config],
    progress: EvalProgress,
    *,
    budget: int | None,
    files: ResultFiles | None,
    jobs: int,
    context: bool,
    verifying: Verifying | None,
) -> list[CaseRun]:
    """Every case under every configuration, by one runner, with parsing processes of its
    own for the code around each change."""
    with contextlib.closing(Parsing()) as parsing:
        runner = CaseRunner(
            llm, budget=budget, result_files=files, jobs=jobs, context=context,
            parsing=parsing, verifying=verifying,
        )  # fmt: skip
        return asyncio.run(_run(runner, llm, cases, configs, progress))


def _result_files(out: Path) -> ResultFiles:
    """`--out`'s result files, the directory made and written to once; exit 2 if it cannot be."""
    files = ResultFiles(out)
    try:
        files.prepare()
    except OSError as exc:
        fail(f"--out: cannot write to {out}: {exc.strerror or exc}")
    return files


def _report(cases: Sequence[Case], runs: list[CaseRun], tolerance: int, *, as_json: bool) -> str:
    """The runs' scores side by side: a table, or one JSON document with `--json`."""
    if as_json:
        return json.dumps(document(cases, runs, tolerance), indent=2)
    return table(summaries(cases, runs, tolerance))


async def _run(
    runner: CaseRunner,
    llm: ClaudeLLM,
    cases: Sequence[Case],
    configs: Sequence[Config],
    progress: EvalProgress,
) -> list[CaseRun]:
    with progress:
        try:
            return await runner.run(cases, configs, on_result=progress.ended)
        finally:
            await llm.aclose()


@evaluate.command("cases")
@click.option(
    "--repo",
    required=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The git repository whose history the cases come from.",
)
@click.option("--name", help="The repository's name in the cases (default: the directory's).")
@click.option("--license", "license_", default="", help="The repository's licence, recorded.")
@click.option(
    "--max-cases",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Buggy cases at most.",
)
@click.option(
    "--clean",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Clean cases at most.",
)
@click.option(
    "--max-files",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Files a case's commit may touch.",
)
@click.option(
    "--max-lines",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Lines a case's commit may change.",
)
@click.option(
    "--suffix",
    multiple=True,
    default=[".py"],
    show_default=True,
    help="Which files count, by suffix (repeat for several).",
)
def cases_command(
    repo: Path,
    name: str | None,
    license_: str,
    max_cases: int,
    clean: int,
    max_files: int,
    max_lines: int,
    suffix: tuple[str, ...],
) -> None:
    """Build cases from a git history (JSON lines on standard output).

    Fix commits are found by their message; `git blame` of the lines each fix changed finds
    the commit that introduced them, whose diff becomes a buggy case labelled with those
    lines. Clean cases are commits of the same size none of whose lines a fix changed.
    Commits touching more than --max-files files or --max-lines lines are left out.
    """
    mining = Mining(
        repo=repo,
        name=name or repo.resolve().name,
        license=license_,
        max_cases=max_cases,
        clean=clean,
        max_files=max_files,
        max_lines=max_lines,
        suffixes=suffix,
    )
    try:
        found = mine_cases(mining)
    except EvaluationError as exc:
        fail(str(exc))
    for case in found:
        click.echo(dump_case(case))
    buggy = sum(c.buggy for c in found)
    click.echo(f"tiebreak: {buggy} buggy and {len(found) - buggy} clean cases", err=True)


def _configs(text: str) -> list[Config]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in {c.value for c in Config}]
    if unknown or not names:
        fail(
            f"--configs: unknown configuration {', '.join(unknown) or '(none)'}; "
            f"choose among {', '.join(Config)}"
        )
    return [Config(n) for n in dict.fromkeys(names)]


def _read_cases(path: str) -> list[Case]:
    try:
        with Path(path).open(encoding="utf-8") as stream:
            return parse_cases(stream)
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    except EvaluationError as exc:
        fail(f"{path}: {exc}")


def _select(cases: list[Case], ids: str | None, limit: int | None) -> list[Case]:
    if ids:
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        known = {c.id for c in cases}
        if missing := [i for i in wanted if i not in known]:
            fail(f"--ids: no case {', '.join(missing)}")
        cases = [c for c in cases if c.id in set(wanted)]
    return cases[:limit] if limit else cases
