"""Debates of a panel of testers (the scripts of :mod:`tests.scenarios.panels`), run by the
engine with scripted models over the app tests' pull request."""

from typing import Any

from agents.debate.engine import Debate
from agents.diff import Diff
from agents.models.scripted import ScriptedLLM, by_agent
from agents.outcome import Outcome
from agents.review import Review
from policies.debate import DebatePolicy
from tests.scenarios.panels import Script
from tests.scenarios.reviews import DIFF

PANEL_DIFF = Diff.parse(DIFF)
"""The pull request of :mod:`tests.scenarios.reviews`: the panels debate it."""


async def panel_outcome(script: Script, testers: int = 3, **limits: Any) -> Outcome:
    """The outcome of a debate over :data:`PANEL_DIFF` by a panel of `testers`."""
    (unit,) = PANEL_DIFF.units()
    policy = DebatePolicy(testers=testers, **limits)
    return await Debate(ScriptedLLM(by_agent(script)), policy).run(unit)


async def panel_review(script: Script, testers: int = 3, **limits: Any) -> Review:
    return Review(units=[await panel_outcome(script, testers, **limits)])
