"""`tiebreak eval`: Tiebreak's configurations measured on labelled bugs, side by side.

`tiebreak eval CASES.jsonl` (or `tiebreak eval run CASES.jsonl`) runs them;
`tiebreak eval cases --repo DIR` builds cases from a repository's own history. Only the
commands' options are defined here, so that their help and usage errors load nothing but
click; what they do is :mod:`app.cli.evaluating`, loaded once one runs.
"""

from pathlib import Path
from typing import Any

import click

from app.cli.model_choice import model_options
from app.cli.testing_options import eval_verify_options
from app.evaluation import DEFAULT_TOLERANCE, Config


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
def run(**options: Any) -> None:
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
    from app.cli import evaluating

    evaluating.run(evaluating.EvalOptions(**options))


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
    from app.cli import evaluating

    evaluating.cases(
        repo=repo,
        name=name,
        license_=license_,
        max_cases=max_cases,
        clean=clean,
        max_files=max_files,
        max_lines=max_lines,
        suffix=suffix,
    )
