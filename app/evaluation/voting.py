"""Self-consistency: several independent reports, and the findings most of them raise.

Two reports raise the same finding when a panel would take them for one finding
(:func:`agents.claims.same_finding`: same path, overlapping lines, the same claim).
"""

from collections.abc import Sequence

from agents.claims import same_finding
from agents.protocol import Finding


def majority(reports: Sequence[Sequence[Finding]]) -> list[Finding]:
    """The findings raised by more than half of `reports`, each once, as first raised."""
    groups: list[tuple[Finding, set[int]]] = []
    for index, report in enumerate(reports):
        for finding in report:
            group = next((g for g in groups if same_finding(g[0], finding)), None)
            if group is None:
                groups.append((finding, {index}))
            else:
                group[1].add(index)
    quorum = len(reports) // 2 + 1
    return [finding for finding, raisers in groups if len(raisers) >= quorum]
