"""The walkthrough of one review unit: one extra call, on the prefix its debate cached.

After the unit's debate, the tester's model is asked once more, with the same tools, system
prompt, diff, context and guidance, to describe the change (`describe_change`): so the call
reads the unit's material from the cache instead of paying for it again, and only its short
turn and its answer are new. It runs after the debate rather than beside it so that it lands
in the unit's journal in a fixed place: a resumed unit replays it rather than paying twice.
What it answers is kept only for the unit's own files.
"""

from typing import Any

from agents import briefs
from agents.diff import ReviewUnit
from agents.llm import PromptBlock, Role
from agents.protocol import DescribeChange, ToolName
from agents.refusals import Checked
from agents.turns import Ask, TurnRunner
from policies.errors import OutOfTokens
from policies.summary import SummaryConfig

AGENT = "walkthrough"
"""The agent name the call goes by, in the transcript and the journal."""


async def describe(
    turns: TurnRunner, unit: ReviewUnit, summary: SummaryConfig, round: int
) -> DescribeChange | None:
    """The unit's walkthrough, or None when the call could not be made or gave nothing."""
    kept: list[DescribeChange] = []
    ask = Ask(
        Role.TESTER,
        ToolName.DESCRIBE_CHANGE,
        [*briefs.unit_briefs(unit), describe_brief(summary)],
        edges=(),
        round=round,
        agent=AGENT,
    )
    try:
        await turns.run(ask, lambda tool_input, _: _checked(tool_input, unit, summary), kept.append)
    except OutOfTokens:
        return None  # the findings matter more: no walkthrough past the ceiling
    return kept[0] if kept else None


def describe_brief(summary: SummaryConfig) -> PromptBlock:
    """What the walkthrough's call asks, after the unit's cached material (whose diff names
    the files: the turn, paid in full, stays short)."""
    asks = [
        "Describe the change for its reviewers with describe_change: `description`, one "
        "paragraph on what it does; `files`, one short line per changed file of the diff; "
        "`attention`, where a person should read closely and why (none if none)."
    ]
    if summary.effort:
        asks.append("`effort`: the work of a careful human review, 1 (trivial) to 5 (hard).")
    if summary.diagram:
        asks.append(
            "`diagram`: only if the change alters a call flow across functions, a Mermaid "
            "sequenceDiagram of the new flow (participants and messages only)."
        )
    asks.append("Plain sentences: no links, images or mentions of people.")
    return PromptBlock(text=" ".join(asks))


def _checked(
    tool_input: dict[str, Any], unit: ReviewUnit, summary: SummaryConfig
) -> Checked[DescribeChange]:
    """The answer kept to the unit's own files, each once, and to what was asked."""
    answer = DescribeChange.model_validate(tool_input)
    paths = set(unit.diff.paths)
    files, named = [], set()
    for line in answer.files:
        if line.path in paths and line.path not in named:
            named.add(line.path)
            files.append(line)
    value = answer.model_copy(
        update={
            "files": files,
            "attention": [a for a in answer.attention if a.path in paths],
            "effort": answer.effort if summary.effort else None,
            "diagram": answer.diagram if summary.diagram else None,
        }
    )
    return Checked(value, taken=1)
