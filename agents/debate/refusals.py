"""What a check of a tool input keeps and what it refuses, item by item.

A tool input is a list of items — findings, answers, evaluations, rulings — and one bad item
no longer costs the good ones: :class:`Checked` holds the items that pass, to be adopted at
once, and a :class:`Refusal` for each one that does not, with its reasons, to be asked again
on the turn's next attempt (:mod:`agents.debate.turns`).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refused item and why.

    It can be asked again when it answered a finding the turn asked about (`finding_id`) or
    raised a finding (`finding`, as the agent gave it, to raise again corrected); an answer
    to a finding nobody asked about cannot.
    """

    problems: tuple[str, ...]
    finding_id: str | None = None
    finding: Any = None

    @property
    def askable(self) -> bool:
        return self.finding_id is not None or self.finding is not None


@dataclass(frozen=True, slots=True)
class Checked(Generic[T]):
    """A tool input with only the items that passed (`taken` of them), and the refusals."""

    value: T
    taken: int
    refused: tuple[Refusal, ...] = ()

    @property
    def adoptable(self) -> bool:
        """Whether the input is adopted, wholly or in part: a call whose every item was
        refused is a failed attempt, one with no item at all is not."""
        return self.taken > 0 or not self.refused

    def problems(self) -> list[str]:
        """Every refusal's reasons, in order, each once."""
        return list(dict.fromkeys(p for r in self.refused for p in r.problems))


def merged(refusals: Sequence[Refusal]) -> tuple[Refusal, ...]:
    """The refusals with one per finding asked about (an answer given twice is refused once,
    with every reason), in order of first appearance."""
    by_id: dict[str, Refusal] = {}
    out: list[Refusal] = []
    for refusal in refusals:
        if refusal.finding_id is None:
            out.append(refusal)
            continue
        earlier = by_id.get(refusal.finding_id)
        if earlier is None:
            by_id[refusal.finding_id] = refusal
            out.append(refusal)
            continue
        problems = tuple(dict.fromkeys((*earlier.problems, *refusal.problems)))
        joined = Refusal(problems, finding_id=refusal.finding_id)
        by_id[refusal.finding_id] = joined
        out[out.index(earlier)] = joined
    return tuple(out)
