"""`tiebreak review`'s printout of a panel's review: votes, and a finding that stands; and
what the model, its tests and the diff wrote, shown without driving the terminal."""

import click

from agents.outcome import (
    Consensus,
    FindingOutcome,
    Outcome,
    Resolution,
    StopReason,
    Transcript,
)
from agents.protocol import Finding, Severity
from agents.review import Review
from agents.verification import Evidence, Verification
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


DRIVES = "\x1b]0;pwned\x07\x1b[2J\x1b[3;1H\x07\x1bc\x9b2J\u202e\u2066\u200b"
"""An OSC retitling the window, the screen cleared, the cursor moved, a bell, the terminal
reset, an 8-bit CSI, bidi overrides and isolates, a zero-width space."""
DRIVING = ("\x1b]", "\x07", "\x1b[2J", "\x1b[3;1H", "\x1bc", "\x9b", "\u202e", "\u2066", "\u200b")


def outcome(**fields: object) -> Outcome:
    empty = {"rounds": 1, "calls": 1, "failed_turns": 0, "dropped_findings": 0}
    return Outcome.model_validate(
        {"unit_id": "u1", "stop": StopReason.SETTLED, "findings": [], **empty}
        | {"usage_by_role": {}, "budget_history": {}, "transcript": Transcript()}
        | fields
    )


def test_a_test_s_path_and_reason_a_note_and_a_unit_s_error_never_drive_the_terminal() -> None:
    finding = Finding(
        path=f"app/pay{DRIVES}.py",
        start_line=3,
        end_line=3,
        severity=Severity.MAJOR,
        claim=f"Refunds{DRIVES} overdraw.\r\nSecond{DRIVES} line.",
    )
    tested = Verification(
        verdict=Evidence.BROKEN, test=f"tests/test{DRIVES}_pay.py", reason=f"it{DRIVES} broke"
    )
    kept = FindingOutcome(
        finding=finding,
        raised_by="tester",
        consensus=Consensus.UNRESOLVED,
        resolution=Resolution.OPEN,
        note=f"the arbiter{DRIVES} was not asked",
        verification=tested,
    )
    failed = outcome(
        unit_id="u2", stop=StopReason.FAILED, error=f"boom{DRIVES}!", paths=(f"lib{DRIVES}.py",)
    )

    shown = render(Review(units=[outcome(findings=[kept]), failed]))

    assert [s for s in DRIVING if s in shown] == []
    assert "\r" not in shown
    out = click.unstyle(shown)
    assert "pwned" not in out
    assert "app/pay.py:3  major  open" in out
    assert "  Refunds overdraw.\n  Second line.\n" in out
    assert "  Test tests/test_pay.py: broken — it broke\n" in out
    assert "  Unresolved: the arbiter was not asked\n" in out
    assert "Not reviewed (boom!):\n  lib.py\n" in out
