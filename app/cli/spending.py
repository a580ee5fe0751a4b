"""What `tiebreak eval` is about to spend, agreed to before it starts, and what it has spent.

Before the first call, eval says how many runs (each case under each configuration) it has
to do and the most they may bill, and asks on a terminal whether to start; off a terminal it
starts only with `--yes`, since no one is there to answer and the spend is real. As runs
end, the spend so far is shown: on the progress bar on a terminal, and as a line per run
otherwise (a log or CI, where a bar would print nothing but its label).
"""

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import click

from agents.wording import counted
from app.cli.exits import fail
from app.evaluation.case_runner import spend_cap, stored_run
from app.evaluation.cases import Case
from app.evaluation.result_files import ResultFiles
from app.evaluation.results import CaseRun, Config


@dataclass(frozen=True)
class Plan:
    """The runs an eval has to do, and the most they may bill."""

    cases: int
    configs: int
    to_do: frozenset[tuple[str, Config]]
    """(case id, configuration) of each run not already kept in the result files."""
    at_most: int
    budget: int | None

    @classmethod
    def of(
        cls,
        cases: Sequence[Case],
        configs: Sequence[Config],
        *,
        budget: int | None,
        files: ResultFiles | None,
        verify: bool,
    ) -> "Plan":
        to_do = frozenset(
            (case.id, config)
            for case in cases
            for config in configs
            if stored_run(files, case, config, verify=verify) is None
        )
        at_most = sum(spend_cap(config, budget) for _, config in to_do)
        return cls(len(cases), len(configs), to_do, at_most, budget)

    def __str__(self) -> str:
        kept = self.cases * self.configs - len(self.to_do)
        cap = "--budget" if self.budget else "each review's token ceiling"
        runs = counted(len(self.to_do), "run") + (
            f", {kept} kept from an earlier run" if kept else ""
        )
        return (
            f"{counted(self.cases, 'case')} under {counted(self.configs, 'configuration')}: "
            f"{runs} to do, billing at most {self.at_most:,} tokens ({cap})"
        )


def agree(plan: Plan, *, yes: bool) -> None:
    """Say what `plan` may spend; go on if `yes`, or if the person at the terminal says so."""
    if not plan.to_do:
        return
    click.echo(f"tiebreak: {plan}", err=True)
    if yes:
        return
    if not sys.stdin.isatty():
        fail("no terminal to confirm the spend on: pass --yes to run without asking")
    click.confirm("Start?", err=True, abort=True)


class EvalProgress:
    """Each run as it ends, and the tokens billed so far by the runs this eval did."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.total = plan.cases * plan.configs
        self.done = 0
        self.spent = 0
        self._terminal = sys.stderr.isatty()
        self._bar = click.progressbar(
            length=self.total,
            label="cases and configurations",
            file=sys.stderr,
            show_pos=True,
            item_show_func=lambda shown: shown,
        )

    def __enter__(self) -> Self:
        if self._terminal:
            self._bar.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._terminal:
            self._bar.__exit__(kind, error, tb)

    def ended(self, run: CaseRun) -> None:
        self.done += 1
        if (run.case_id, run.config) in self.plan.to_do:
            self.spent += run.billed_tokens
        shown = f"{run.case_id} {run.config} · {self.spent:,} billed tokens so far"
        if self._terminal:
            self._bar.update(1, shown)
        else:
            click.echo(f"tiebreak: {self.done}/{self.total} · {shown}", err=True)
