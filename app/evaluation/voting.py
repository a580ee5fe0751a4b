"""Self-consistency: several independent reports, and the findings most of them raise.

Two reports raise the same finding when a panel would take them for one finding
(:func:`agents.debate.claims.same_finding`: same path, overlapping lines, the same claim).
"""

from collections.abc import Callable, Sequence
from typing import TypeVar

from agents.debate.claims import same_finding
from agents.protocol import Finding

T = TypeVar("T")


def majority(reports: Sequence[Sequence[T]], key: Callable[[T], Finding]) -> list[T]:
    """The items whose findings (`key`) more than half of `reports` raise, each once, as
    first raised."""
    groups: list[tuple[T, set[int]]] = []
    for index, report in enumerate(reports):
        for item in report:
            group = next((g for g in groups if same_finding(key(g[0]), key(item))), None)
            if group is None:
                groups.append((item, {index}))
            else:
                group[1].add(index)
    quorum = len(reports) // 2 + 1
    return [item for item, raisers in groups if len(raisers) >= quorum]
