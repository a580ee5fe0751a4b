"""`tiebreak review`'s printout of a panel's review: votes, and a finding that stands."""

import click

from app.cli.terminal import render
from tests.kits.panel import panel_review
from tests.scenarios.panels import (
    CORRECTNESS,
    FIXED_BY_MAJORITY,
    KEPT,
    PERFORMANCE,
    SECURITY,
    TIE_WARNED,
)


async def test_a_finding_that_stands_prints_as_such_in_its_own_colour() -> None:
    out = render(await panel_review(KEPT, max_exchanges_per_finding=2))

    assert click.style("stands", fg="magenta") in out
    assert click.style("open", fg="red") not in out
    plain = click.unstyle(out)
    assert "stands · majority (exchange_limit)" in plain
    assert (
        f"  Raised by {CORRECTNESS}; kept by {CORRECTNESS}, {SECURITY}; accepted by {PERFORMANCE}."
    ) in plain
    assert "  Stands: a majority of the testers keeps it against the coder" in plain
    assert "Unresolved" not in plain
    assert plain.splitlines()[-1].startswith("1 finding (1 standing by majority) · 1 unit")


async def test_majority_fixes_and_rulings_after_a_tie_print_with_their_votes() -> None:
    fixed = click.unstyle(render(await panel_review(FIXED_BY_MAJORITY)))
    ruled = click.unstyle(render(await panel_review(TIE_WARNED, testers=2)))

    assert "fixed · majority · round 1" in fixed
    assert f"kept by {PERFORMANCE}; accepted by {CORRECTNESS}, {SECURITY}." in fixed
    assert "warning · arbiter (tie)" in ruled
    assert f"kept by {CORRECTNESS}; accepted by {SECURITY}." in ruled
