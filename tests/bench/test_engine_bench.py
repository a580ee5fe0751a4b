"""The engine benchmark still runs the debate it describes (figures are printed, not judged)."""

import asyncio
import sys

import pytest

from agents.debate.engine import Debate
from agents.diff import Diff
from agents.models.scripted import ScriptedLLM
from agents.outcome import Consensus, Resolution
from bench import engine as bench
from policies.arbitration import ArbitrationTrigger


def test_the_benchmark_conversation_is_the_one_it_describes() -> None:
    (unit,) = Diff.parse(bench.sample_diff()).units()
    outcome = asyncio.run(Debate(ScriptedLLM(bench.conversation)).run(unit))

    assert [(f.consensus, f.resolution) for f in outcome.findings] == [
        (Consensus.UNANIMOUS, Resolution.FIXED),
        (Consensus.UNANIMOUS, Resolution.FIXED),
        (Consensus.ARBITER, Resolution.WARNING),
    ]
    assert outcome.findings[2].trigger is ArbitrationTrigger.BUDGET
    assert outcome.failed_turns == 0


def test_the_benchmark_prints_its_figures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["bench.engine", "--debates", "3"])
    bench.main()

    out = capsys.readouterr().out
    assert "model calls:             21 (7.0 per debate)" in out
    assert "engine overhead per call:" in out
