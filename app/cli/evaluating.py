"""What `tiebreak eval` does once its options are read (:mod:`app.cli.evaluate`): Tiebreak's
configurations measured on labelled bugs, and cases built from a repository's history."""

import asyncio
import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from agents.models.claude import ClaudeLLM
from app.cli.exits import fail
from app.cli.model_choice import connect
from app.cli.spending import EvalProgress, Plan, agree
from app.cli.verifying import eval_verifying
from app.evaluation.case_runner import CaseRunner
from app.evaluation.cases import Case, dump_case, parse_cases
from app.evaluation.checkouts import Verifying
from app.evaluation.errors import EvaluationError
from app.evaluation.history import Mining, mine_cases
from app.evaluation.report import document, summaries, table
from app.evaluation.result_files import ResultFiles
from app.evaluation.results import CaseRun, Config
from app.parsing import Parsing


@dataclass(frozen=True)
class EvalOptions:
    """`tiebreak eval run`'s options, as click read them (:mod:`app.cli.evaluate`)."""

    cases_file: str
    configs: str
    budget: int | None
    jobs: int
    limit: int | None
    ids: str | None
    tolerance: int
    no_context: bool
    as_json: bool
    yes: bool
    out: Path | None
    tester_model: str | None
    coder_model: str | None
    arbiter_model: str | None
    verify_command: str | None
    verify_setup: str | None
    checkout: Path | None
    no_sandbox: bool
    no_memory_limit: bool


def run(options: EvalOptions) -> None:
    """Run the configurations on the cases of `cases_file` and print the report."""
    chosen = _configs(options.configs)
    cases = _select(_read_cases(options.cases_file), options.ids, options.limit)
    verifying = eval_verifying(
        options.verify_command,
        options.verify_setup,
        options.checkout,
        sandbox=not options.no_sandbox,
        memory_limit=not options.no_memory_limit,
    )
    files = _result_files(options.out) if options.out else None
    # Whatever can fail before the first call fails before the spend is asked for.
    llm = connect(options.tester_model, options.coder_model, options.arbiter_model)
    plan = Plan.of(cases, chosen, budget=options.budget, files=files, verify=verifying is not None)
    agree(plan, yes=options.yes)
    runs = _run_cases(
        llm, cases, chosen, EvalProgress(plan),
        budget=options.budget, files=files, jobs=options.jobs,
        context=not options.no_context, verifying=verifying,
    )  # fmt: skip
    click.echo(_report(cases, runs, options.tolerance, as_json=options.as_json))


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


def cases(
    repo: Path,
    name: str | None,
    license_: str,
    max_cases: int,
    clean: int,
    max_files: int,
    max_lines: int,
    suffix: tuple[str, ...],
) -> None:
    """Print the cases mined from `repo`'s history as JSON lines."""
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
