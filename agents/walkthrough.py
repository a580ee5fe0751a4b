"""A review's walkthrough: the units' walkthroughs merged into one, for the summary.

Each unit's call described its own files (`agents.debate.unit_walkthrough`); the review's
walkthrough names every changed file once, in the units' order (the riskiest first), a file
cut across units by its first unit's line, and the files of units not reviewed as such. Its
effort is the largest of the units': a review is as hard as its hardest part.
"""

from pydantic import BaseModel, ConfigDict

from agents.outcome import Outcome
from agents.protocol import AttentionArea, FileLine
from agents.review import Review

MAX_DESCRIPTIONS = 5
"""Units' paragraphs kept, the riskiest units' first: a summary is read first, not last."""
MAX_ATTENTION = 10
MAX_DIAGRAMS = 2


class Walkthrough(BaseModel):
    """What a review's change does, file by file, and where a person should look."""

    model_config = ConfigDict(frozen=True)

    description: tuple[str, ...] = ()
    """One paragraph per unit described, in the units' order."""
    files: tuple[FileLine, ...] = ()
    """Every changed file once; an empty line for a file its unit did not describe."""
    attention: tuple[AttentionArea, ...] = ()
    effort: int | None = None
    diagrams: tuple[str, ...] = ()
    unreviewed: tuple[str, ...] = ()
    """The files of the units not reviewed, which no walkthrough describes."""


def walkthrough(review: Review) -> Walkthrough | None:
    """The review's walkthrough; None when no unit has one (the config asked for none)."""
    described = [u for u in review.units if u.walkthrough is not None]
    if not described:
        return None
    unreviewed = tuple(f.path for f in review.unreviewed if not f.in_part)
    lines: dict[str, FileLine] = {}
    for unit in review.units:
        for line in _lines(unit):
            if line.path not in unreviewed:
                lines.setdefault(line.path, line)
    texts = [u.walkthrough.description.strip() for u in described if u.walkthrough]
    attention = [a for u in described if u.walkthrough for a in u.walkthrough.attention]
    efforts = [u.walkthrough.effort for u in described if u.walkthrough and u.walkthrough.effort]
    diagrams = [u.walkthrough.diagram for u in described if u.walkthrough and u.walkthrough.diagram]
    return Walkthrough(
        description=tuple(t for t in texts if t)[:MAX_DESCRIPTIONS],
        files=tuple(lines.values()),
        attention=tuple(attention[:MAX_ATTENTION]),
        effort=max(efforts, default=None),
        diagrams=tuple(diagrams[:MAX_DIAGRAMS]),
        unreviewed=unreviewed,
    )


def _lines(unit: Outcome) -> list[FileLine]:
    """A line for each of the unit's files: its own where it wrote one, an empty one else. A
    unit carried from an earlier review speaks only of the files it was carried for."""
    written = {line.path: line for line in unit.walkthrough.files} if unit.walkthrough else {}
    if unit.carried_from is not None:
        return list(written.values())
    return [written.get(path, FileLine(path=path, summary="")) for path in unit.paths]
