"""The token benchmark runs its scenario and prints its figures (printed, not judged: no goal
is asserted here, only that caching lowers the bill)."""

import asyncio
import re

import pytest

from agents.tokens import typical_tokens
from bench import tokens as bench


def test_the_benchmark_prints_its_figures_and_caching_lowers_the_bill(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main([])

    out = capsys.readouterr().out
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
    on, off, warm, diff_text = asyncio.run(bench.measure())

    first, *rest = on.usages
    assert first.cache_creation_input_tokens > typical_tokens(diff_text)
    assert all(u.cache_read_input_tokens or u.cache_creation_input_tokens for u in rest)
    assert all(u.cache_read_input_tokens == u.cache_creation_input_tokens == 0 for u in off.usages)
    # After an earlier review only the unit's diff is written: the shared prompt is read.
    assert warm.usages[0].cache_read_input_tokens > 0
    assert warm.usages[0].cache_creation_input_tokens < first.cache_creation_input_tokens
