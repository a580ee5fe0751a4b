"""What `tiebreak review --dry-run` prints: the review's plan, made as the review makes it and
stopped before its first model call — its units in the order they would be debated, the
files each holds and what its agents read beside them, the files no unit holds and why, and
the cost estimate the review gives before it starts; as text, or with `--json` as JSON.

Paths and the context's notes come from the diff, so the text shows them through
:func:`app.cli.printable.printable`, as the review's own text is shown.
"""

from collections.abc import Sequence

import click
from pydantic import BaseModel, ConfigDict

from agents.coverage import CostEstimate
from agents.diff import Diff, DiffFile, ReviewUnit
from agents.wording import counted
from app.cli.printable import json_text, printable

DRY_RUN = "Dry run: no model is called, nothing is billed."


class PlannedUnit(BaseModel):
    """One unit as it would be debated."""

    model_config = ConfigDict(frozen=True)

    id: str
    files: dict[str, int]
    """Each of its files, by path, with the lines the diff adds or removes there."""
    reads: list[str]
    """What its agents read beside its diff, in words."""
    tokens: int
    """Its debate's expected billed tokens."""
    reached: bool
    """Whether the ceiling is expected to reach it."""


class DryRunPlan(BaseModel):
    """A review's plan, before its first model call."""

    model_config = ConfigDict(frozen=True)

    units: list[PlannedUnit]
    unreviewed: dict[str, list[str]]
    """The files no unit holds, by why."""
    estimate: CostEstimate


def dry_run_plan(diff: Diff, units: Sequence[ReviewUnit], expected: CostEstimate) -> DryRunPlan:
    """The plan of reviewing `diff` as `units`, expected to cost `expected`."""
    return DryRunPlan(
        units=[
            PlannedUnit(
                id=unit.id,
                files={f.path: f.changed_lines for f in unit.diff.files},
                reads=_reads(unit),
                tokens=cost.tokens,
                reached=n < expected.covered,
            )
            for n, (unit, cost) in enumerate(zip(units, expected.units, strict=True))
        ],
        unreviewed=_left_out(diff, units),
        estimate=expected,
    )


def plan_text(plan: DryRunPlan) -> str:
    """The plan as the terminal shows it."""
    lines = [click.style(DRY_RUN, bold=True), ""]
    for unit in plan.units:
        head = f"Unit {unit.id} · {counted(len(unit.files), 'file')} · about {unit.tokens:,} "
        head += "billed tokens" + ("" if unit.reached else " · the ceiling may not reach it")
        lines.append(click.style(head, bold=True))
        lines += [f"  {_plain(p)}: {counted(n, 'line')} changed" for p, n in unit.files.items()]
        if unit.reads:
            lines += ["  Reads beside the diff:", *(f"    {_plain(r)}" for r in unit.reads)]
        else:
            lines.append("  Reads the diff alone")
        lines.append("")
    for reason, paths in plan.unreviewed.items():
        lines.append(click.style(f"Not reviewed ({reason}):", fg="red"))
        lines += [f"  {_plain(path)}" for path in paths]
        lines.append("")
    lines.append(f"Estimate: {plan.estimate.describe()}")
    return "\n".join(lines)


def plan_json(plan: DryRunPlan) -> str:
    """The plan as `--json` prints it, saying it is a dry run."""
    return json_text({"dry_run": DRY_RUN, **plan.model_dump(mode="json")})


def _reads(unit: ReviewUnit) -> list[str]:
    """What the unit's agents read beside its diff: each part of the code around it as its
    context names it (the lines themselves left out), and what else they are given."""
    reads = [line for line in unit.context.splitlines() if line and not line[0].isspace()]
    if unit.intent:
        reads.append("what the change says it does")
    if unit.guidance:
        reads.append("the repository's guidance for its files")
    if unit.conventions is not None:
        reads.append("how the repository's tests are written and run")
    return reads


def _left_out(diff: Diff, units: Sequence[ReviewUnit]) -> dict[str, list[str]]:
    """The files of `diff` that none of its `units` holds, by why: nothing of them is there
    to review at the head."""
    held = {path for unit in units for path in unit.diff.paths}
    by_reason: dict[str, list[str]] = {}
    for file in diff.files:
        if file.path not in held:
            by_reason.setdefault(_why(file), []).append(file.path)
    return by_reason


def _why(file: DiffFile) -> str:
    if file.deleted:
        return "deleted: nothing is left of it to review"
    if file.binary:
        return "binary: no lines to review"
    return "no line changed: renamed, or its mode changed"


def _plain(text: str) -> str:
    return printable(text, one_line=True)
