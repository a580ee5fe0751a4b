"""The walkthrough of one review unit: asked of its first tester, with its report.

The tester who reports first on a unit reads the unit's diff, context and guidance in that
turn; asked there to describe the change too (the report's `walkthrough`), the walkthrough
costs the unit only its answer and the few words that ask for it: no call of its own, no
second reading of the diff, not even from the cache. The report's schema shows the field only
when the repository's summary asks for one (:data:`agents.protocol.OPTIONAL_FIELDS`), as a
bare object whose shape the asking turn tells: a schema would be read again by each of the
unit's calls for the one that writes it. A tester that leaves it out hands the ask to the next
tester of a panel; a unit no tester described has no walkthrough, and its files are still
named.

The walkthrough is model text about untrusted code: it is kept to the unit's own files, each
once, and to what was asked; one that breaks its schema is dropped, never the findings with it.
"""

from typing import Any

from pydantic import ValidationError

from agents.diff import ReviewUnit
from agents.models.llm import PromptBlock
from agents.protocol import UnitWalkthrough
from policies.summary import SummaryConfig


def brief(summary: SummaryConfig) -> PromptBlock:
    """What the report's turn asks besides the findings (the turn is paid in full: short)."""
    asks = [
        "Also describe the change for its reviewers in `walkthrough`, an object: "
        "`description`, one paragraph on what the change does; `files`, a list of `path` and "
        "`summary`, one short line for each changed file of the diff; `attention`, a list of "
        "`path` and `why`, where a person should read closely (empty if nowhere)."
    ]
    if summary.effort:
        asks.append(
            "`effort`, a whole number: the work of a careful human review, 1 (trivial) to 5."
        )
    if summary.diagram:
        asks.append(
            "`diagram`, only if the change alters a call flow across functions: a Mermaid "
            "sequenceDiagram of the new flow (participants and messages only)."
        )
    asks.append("Plain sentences: no links, images or mentions of people.")
    return PromptBlock(text=" ".join(asks))


def parsed(raw: Any) -> UnitWalkthrough | None:
    """A report's `walkthrough` as given, or None when there is none or it breaks its
    schema: the findings beside it stand either way."""
    if raw is None:
        return None
    try:
        return UnitWalkthrough.model_validate(raw)
    except ValidationError:
        return None


def kept(answer: UnitWalkthrough, unit: ReviewUnit, summary: SummaryConfig) -> UnitWalkthrough:
    """The walkthrough kept to the unit's own files, each once, and to what was asked."""
    paths = set(unit.diff.paths)
    files, named = [], set()
    for line in answer.files:
        if line.path in paths and line.path not in named:
            named.add(line.path)
            files.append(line)
    return answer.model_copy(
        update={
            "files": files,
            "attention": [a for a in answer.attention if a.path in paths],
            "effort": answer.effort if summary.effort else None,
            "diagram": answer.diagram if summary.diagram else None,
        }
    )
