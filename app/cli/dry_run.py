"""What `tiebreak review --dry-run` prints: the review's plan, made as the review makes it and
stopped before its first model call — its units in the order they would be debated, the
files each holds and what its agents read beside them, the files no unit holds and why, and
the cost estimate the review gives before it starts.

Paths and the context's notes come from the diff, so they are shown through
:func:`app.cli.printable.printable`, as the review's own text is.
"""

from collections.abc import Sequence

import click

from agents.coverage import CostEstimate
from agents.diff import Diff, DiffFile, ReviewUnit
from app.cli.printable import printable

DRY_RUN = "Dry run: no model is called, nothing is billed."


def plan_text(diff: Diff, units: Sequence[ReviewUnit], expected: CostEstimate) -> str:
    """The plan of reviewing `diff` as `units`, expected to cost `expected`."""
    lines = [click.style(DRY_RUN, bold=True), ""]
    reached = expected.covered
    for n, (unit, cost) in enumerate(zip(units, expected.units, strict=True)):
        files = _count(len(unit.diff.files), "file")
        head = f"Unit {unit.id} · {files} · about {cost.tokens:,} billed tokens"
        if n >= reached:
            head += " · the ceiling may not reach it"
        lines.append(click.style(head, bold=True))
        lines += [
            f"  {_plain(f.path)}: {_count(f.changed_lines, 'line')} changed"
            for f in unit.diff.files
        ]
        lines += _reads(unit)
        lines.append("")
    for reason, paths in _left_out(diff, units).items():
        lines.append(click.style(f"Not reviewed ({reason}):", fg="red"))
        lines += [f"  {_plain(path)}" for path in paths]
        lines.append("")
    lines.append(f"Estimate: {expected.describe()}")
    return "\n".join(lines)


def _reads(unit: ReviewUnit) -> list[str]:
    """What the unit's agents read beside its diff: each part of the code around it as its
    context names it (the lines themselves left out), and what else they are given."""
    named = [line for line in unit.context.splitlines() if line and not line[0].isspace()]
    lines = ["  Reads beside the diff:"] if named else ["  Reads the diff alone: no code around it"]
    lines += [f"    {_plain(line)}" for line in named]
    if unit.intent:
        lines.append("    what the change says it does")
    if unit.guidance:
        lines.append("    the repository's guidance for its files")
    if unit.conventions is not None:
        lines.append("    how the repository's tests are written and run")
    return lines


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


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
