"""The token benchmark runs its scenarios and prints their figures (printed, not judged: no goal
is asserted here, only that caching lowers the bill and that a ring of testers, shown fewer
answers and fewer neighbours, bills less than a full panel; token counts are deterministic)."""

import asyncio
import dataclasses
import io
import re
from contextlib import redirect_stdout

import pytest

from agents.models.tokens import typical_tokens
from agents.outcome import Outcome
from agents.protocol import ToolName
from bench import panel_tokens as panel
from bench import proof_tokens, walkthrough_tokens
from bench import tokens as bench
from bench.billing import ScenarioBroken
from bench.panel_courses import courses
from bench.shop_diff import sample_diff, sample_unit
from policies.panel import Topology

ROWS = (
    "calls",
    "answers shown to testers",
    "other testers' votes shown",
    "turn tokens (after the shared prefix)",
    "uncached input tokens",
    "cache writes",
    "cache reads",
    "output tokens",
    "billed-equivalent input tokens",
    "billed input of tester evaluations",
    "billed input of coder answers",
)


@pytest.fixture(scope="module")
def printed() -> str:
    """What `python -m bench.tokens` prints, run once for the module."""
    out = io.StringIO()
    with redirect_stdout(out):
        bench.main([])
    return out.getvalue()


@pytest.fixture(scope="module")
def panel_runs() -> panel.PanelRuns:
    return asyncio.run(panel.measure())


def test_the_benchmark_prints_its_figures_and_caching_lowers_the_bill(printed: str) -> None:
    out = printed
    for label in (
        "calls",
        "uncached input tokens",
        "cache writes",
        "cache reads",
        "output tokens",
        "diff tokens",
        "billed-equivalent input tokens",
    ):
        assert re.search(rf"^{label} +[\d,.]+ +[\d,.]+$", out, re.MULTILINE), label
    calls = re.search(r"^calls +(\d+) +(\d+)$", out, re.MULTILINE)
    assert calls is not None
    assert calls.groups() == ("6", "6")
    ratio = re.search(
        r"^billed input / diff tokens +(\d+\.\d\d) +(\d+\.\d\d) +goal ≤ 2\.0 \(caching on\)$",
        out,
        re.MULTILINE,
    )
    assert ratio is not None
    cached, uncached = (float(r) for r in ratio.groups())
    assert cached < uncached
    warm = re.search(r"^  the same after an earlier review +(\d+\.\d\d) ", out, re.MULTILINE)
    assert warm is not None
    assert float(warm.group(1)) < cached


def test_with_caching_every_call_reads_or_writes_the_prefix_and_without_none_does() -> None:
    on, off, warm, _, diff_text = asyncio.run(bench.measure())

    first, *rest = on.usages
    assert first.cache_creation_input_tokens > typical_tokens(diff_text)
    assert all(u.cache_read_input_tokens or u.cache_creation_input_tokens for u in rest)
    assert all(u.cache_read_input_tokens == u.cache_creation_input_tokens == 0 for u in off.usages)
    # After an earlier review only the unit's diff is written: the shared prompt is read.
    assert warm.usages[0].cache_read_input_tokens > 0
    assert warm.usages[0].cache_creation_input_tokens < first.cache_creation_input_tokens


def _ends(outcome: Outcome) -> list[tuple[object, ...]]:
    return [
        (f.finding.id, f.raised_by, f.consensus, f.resolution, f.closed_in_round, f.trigger)
        for f in outcome.findings
    ]


def test_the_panel_scenario_ends_every_finding_the_same_way_in_a_ring_and_a_full_panel(
    panel_runs: panel.PanelRuns,
) -> None:
    for pair in (panel_runs.on, panel_runs.off):
        ring, full = pair.ring.outcome, pair.full.outcome
        assert _ends(ring) == _ends(full)
        assert len(ring.findings) == len(panel_runs.plan) == 7
        assert (ring.rounds, ring.calls, ring.failed_turns) == (2, 17, 0)
        assert (full.rounds, full.calls, full.failed_turns) == (2, 17, 0)
        ends = {f.finding.id: f for f in ring.findings}
        # Two findings are contested into round 2; no arbitration: a majority settles them.
        assert {i for i, f in ends.items() if f.closed_in_round == 2} == {"F3", "F5"}
        assert all(r.tool != ToolName.ARBITRATE for r in pair.ring.requests + pair.full.requests)
        # What a topology changes is who votes: in a ring, a finding settled in round 1 has
        # the votes of its raiser and its two neighbours; on a full panel, everyone's.
        f4 = {f.finding.id: f for f in full.findings}["F4"]
        assert len(ends["F4"].votes) == 3
        assert len(f4.votes) == 5
        # A contested finding reached the whole ring in round 2.
        assert len(ends["F5"].votes) == 5


def test_a_ring_tester_is_shown_fewer_answers_and_neighbours_and_the_ring_bills_less(
    panel_runs: panel.PanelRuns,
) -> None:
    for pair in (panel_runs.on, panel_runs.off):
        ring = panel.PanelFigures.of(pair.ring, panel_runs.diff_tokens)
        full = panel.PanelFigures.of(pair.full, panel_runs.diff_tokens)
        assert ring.totals.calls == full.totals.calls
        assert ring.shown < full.shown
        assert 0 < ring.heard < full.heard  # the ring shares votes, between neighbours only
        assert ring.turn < full.turn
        assert ring.evaluations < full.evaluations
        assert ring.totals.billed < full.totals.billed


def test_the_report_prints_the_panel_section_with_both_topologies_and_the_anchor(
    printed: str,
) -> None:
    section = printed[printed.index("Panel scenario:") :]
    assert section.startswith(
        "Panel scenario: 5 testers (correctness, security, performance, concurrency, "
        "error_handling), 7 findings, 2 rounds\n"
    )
    header = r"^ +ring +full +ring / full +ring +full +ring / full$"
    assert re.search(header, section, re.MULTILINE)
    number = r"([\d,]+(?:\.\d+)?)"
    ratio = r"(\d+\.\d\d|-)"
    rows = {}
    for label in ROWS:
        cells = " +".join([number, number, ratio] * 2)
        found = re.search(rf"^{re.escape(label)} +{cells}$", section, re.MULTILINE)
        assert found is not None, label
        ring_on, full_on, _, ring_off, full_off, _ = found.groups()
        rows[label] = [float(v.replace(",", "")) for v in (ring_on, full_on, ring_off, full_off)]
    for label in ("billed-equivalent input tokens", "billed input of tester evaluations"):
        ring_on, full_on, ring_off, full_off = rows[label]
        assert ring_on < full_on
        assert ring_off < full_off
    anchor = re.search(
        r"^Anchor: sparse topologies use ~40% fewer input tokens than a fully connected debate "
        r"\(Li et al\. 2024\)\.\n"
        r"Measured 1 - ring/full: billed input (\d+\.\d)% \(caching on\), (\d+\.\d)% \(off\); "
        r"tester evaluations alone (\d+\.\d)% \(on\), (\d+\.\d)% \(off\)\.$",
        section,
        re.MULTILINE,
    )
    assert anchor is not None
    total_on, total_off, evals_on, evals_off = (float(v) / 100 for v in anchor.groups())
    ring_on, full_on, ring_off, full_off = rows["billed-equivalent input tokens"]
    assert total_on == pytest.approx(1 - ring_on / full_on, abs=0.001)
    assert total_off == pytest.approx(1 - ring_off / full_off, abs=0.001)
    assert 0 < evals_off < evals_on


async def test_a_debate_that_strays_from_its_plan_breaks_the_panel_scenario() -> None:
    unit = sample_unit(sample_diff())
    plan = list(courses(unit.diff))
    f5 = plan[4]
    convinced = dataclasses.replace(f5.exchanges[1], kept={})  # nobody keeps F5 in round 2
    plan[4] = dataclasses.replace(f5, exchanges=(f5.exchanges[0], convinced))

    with pytest.raises(ScenarioBroken, match="F5 ended"):
        await panel.run(unit, Topology.RING, cache=True, plan=plan)


def test_the_context_is_written_to_the_cache_once_and_read_on_every_later_call() -> None:
    on, _, _, with_context, diff_text = asyncio.run(bench.measure())

    out = bench.context_report(on, with_context, diff_text)

    per_token = re.search(r"^billed per context token +(\d+\.\d\d) .*= (\d+\.\d\d)$", out, re.M)
    assert per_token is not None, out
    assert float(per_token.group(1)) <= float(per_token.group(2))
    ratios = re.search(r"^billed input / diff tokens +(\d+\.\d\d) +(\d+\.\d\d)$", out, re.M)
    assert ratios is not None, out
    assert float(ratios.group(1)) < float(ratios.group(2))


def test_the_description_is_written_to_the_cache_once_and_read_on_every_later_call(
    printed: str,
) -> None:
    on, _, _, _, diff_text = asyncio.run(bench.measure())
    with_intent = asyncio.run(bench.measure_intent(sample_unit(diff_text)))

    out = bench.intent_report(on, with_intent, diff_text)

    assert out in printed
    per_token = re.search(r"^billed per description token +(\d+\.\d\d) .*= (\d+\.\d\d)$", out, re.M)
    assert per_token is not None, out
    assert float(per_token.group(1)) <= float(per_token.group(2))
    billed = re.search(r"^billed-equivalent input tokens +([\d,.]+) +([\d,.]+)$", out, re.M)
    assert billed is not None, out
    without, with_description = (float(v.replace(",", "")) for v in billed.groups())
    assert without < with_description
    share = re.search(r"^  description share of billed input +(\d+\.\d)%$", out, re.M)
    assert share is not None, out
    assert 0 < float(share.group(1)) < 100


def test_the_walkthrough_adds_no_call_and_prints_what_it_adds_per_diff_token(
    printed: str,
) -> None:
    diff_text = sample_diff()
    cost = asyncio.run(walkthrough_tokens.measure(sample_unit(diff_text), diff_text))

    assert cost.with_walkthrough.calls == cost.without.calls
    # No second reading of the diff, even from the cache: what it adds is far less than a
    # cache read of the diff alone (0.1 a token).
    assert 0 < cost.input < 0.1 * typical_tokens(diff_text) / 2
    assert cost.output > 0
    assert f"= {cost.ratio:.3f} per diff token   goal ≤ 0.15" in printed


def test_proving_the_findings_adds_only_the_retest_turn_and_prints_what_a_proof_costs(
    printed: str,
) -> None:
    diff_text = sample_diff()
    cost = asyncio.run(proof_tokens.measure(sample_unit(diff_text), diff_text))

    assert cost.with_tests.calls == cost.without.calls + 1
    # The tests are the tester's to write, and each run is told in the turns after it.
    assert cost.output > cost.retest.output > 0
    assert cost.input > cost.retest.input > 0
    assert f"{cost.per_diff_token():.3f} per diff token" in printed
    assert f"{cost.ratio_without:>12.2f}{cost.ratio_with:>12.2f}" in printed
