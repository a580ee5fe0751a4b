"""The tester panel: who sits on it, whom each tester hears, and how its votes settle a finding.

A debate has one tester, or a panel of two to five, each reviewing with its own focus. On a
panel, communication is sparse (after Li et al., "Improving Multi-Agent Debate with Sparse
Communication Topology", 2024): in a `ring` a tester hears only its two neighbours, in a
`full` panel it hears everyone. A tester votes on the findings it has heard of — its own,
and those its neighbours raised or voted on — so a disputed finding spreads around the ring
one neighbour per round while a settled one costs only the testers next to it.

Each tester's latest vote counts: `keep` (the finding stands against the coder's answer) or
`accept` (the answer fixes it, or shows it wrong). Raising a finding is a keep: its raiser
holds it until an answer persuades it. More accepts than keeps closes a finding;
more keeps than accepts, from two testers or more, makes it stand against the coder; an even
split goes to the arbiter. A lone tester's keep is not a majority: its deadlocks go to the
arbiter, as with a single tester.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from policies.errors import PolicyError


class Focus(StrEnum):
    """What a tester looks for first."""

    GENERAL = "general"
    CORRECTNESS = "correctness"
    SECURITY = "security"
    PERFORMANCE = "performance"
    CONCURRENCY = "concurrency"
    ERROR_HANDLING = "error_handling"
    COMPATIBILITY = "compatibility"


PANEL_FOCUS = (
    Focus.CORRECTNESS,
    Focus.SECURITY,
    Focus.PERFORMANCE,
    Focus.CONCURRENCY,
    Focus.ERROR_HANDLING,
)
"""The focus of each panel seat the config leaves unset, in order (those not chosen)."""

MAX_TESTERS = 5


class Topology(StrEnum):
    """Whom each tester of a panel hears."""

    RING = "ring"
    """Its two neighbours: sparse, cheaper."""
    FULL = "full"
    """Every other tester."""


class Vote(StrEnum):
    KEEP = "keep"
    """The finding stands: the tester raised it, or the coder's answer neither fixes it nor
    shows it wrong."""
    ACCEPT = "accept"
    """The coder's answer settles the finding."""


@dataclass(frozen=True, slots=True)
class Seat:
    """One tester of the panel."""

    name: str
    focus: Focus


class Panel:
    """The testers of one debate and whom each of them hears."""

    def __init__(self, seats: Sequence[Seat], topology: Topology) -> None:
        names = [s.name for s in seats]
        if not seats or len(seats) > MAX_TESTERS or len(set(names)) != len(names):
            raise PolicyError(f"a panel has one to {MAX_TESTERS} testers with distinct names")
        self.seats = tuple(seats)
        self.topology = topology
        self.names = tuple(names)
        self._neighbours = {n: _neighbours(self.names, i, topology) for i, n in enumerate(names)}

    @classmethod
    def of(cls, testers: int, focus: Sequence[Focus], topology: Topology) -> "Panel":
        """The panel a debate policy describes: `testers` seats, the first ones with `focus`,
        the rest with the next of :data:`PANEL_FOCUS` not chosen yet. A single tester is
        named `tester`; panel seats are named by their focus."""
        if testers == 1:
            return cls([Seat("tester", focus[0] if focus else Focus.GENERAL)], topology)
        rest = [f for f in (*PANEL_FOCUS, Focus.GENERAL) if f not in focus]
        chosen = [*focus, *rest][:testers]
        return cls([Seat(f"tester-{f.replace('_', '-')}", f) for f in chosen], topology)

    @property
    def size(self) -> int:
        return len(self.seats)

    @property
    def is_panel(self) -> bool:
        return self.size > 1

    def neighbours(self, name: str) -> tuple[str, ...]:
        """The testers `name` hears, in panel order."""
        return self._neighbours[name]

    def focus(self, name: str) -> Focus:
        return next(s.focus for s in self.seats if s.name == name)


def _neighbours(names: Sequence[str], i: int, topology: Topology) -> tuple[str, ...]:
    if topology is Topology.FULL:
        heard = {j for j in range(len(names)) if j != i}
    else:
        heard = {(i - 1) % len(names), (i + 1) % len(names)} - {i}
    return tuple(names[j] for j in sorted(heard))


class PanelVerdict(StrEnum):
    ACCEPTED = "accepted"
    """More testers accept the coder's answer than keep the finding."""
    STANDS = "stands"
    """A majority of two or more testers keeps the finding against the coder's answer."""
    SPLIT = "split"
    """As many keep it as accept: the arbiter decides."""
    KEPT = "kept"
    """Kept, but by a lone tester: a deadlock with the coder, as in a one-tester debate."""


@dataclass(frozen=True, slots=True)
class Tally:
    """The latest votes of a panel on one finding."""

    keep: tuple[str, ...]
    accept: tuple[str, ...]

    @classmethod
    def of(cls, votes: Mapping[str, Vote]) -> "Tally":
        return cls(
            keep=tuple(t for t, v in votes.items() if v is Vote.KEEP),
            accept=tuple(t for t, v in votes.items() if v is Vote.ACCEPT),
        )

    @property
    def verdict(self) -> PanelVerdict:
        keep, accept = len(self.keep), len(self.accept)
        if accept > keep:
            return PanelVerdict.ACCEPTED
        if keep == accept:
            return PanelVerdict.SPLIT
        return PanelVerdict.STANDS if keep >= 2 else PanelVerdict.KEPT

    @property
    def unanimous(self) -> bool:
        """Whether every vote accepts the coder's answer."""
        return bool(self.accept) and not self.keep

    def describe(self) -> str:
        """`kept by a, b; accepted by c`, for the transcript."""
        parts = [
            f"{verb} by {', '.join(names)}"
            for verb, names in (("kept", self.keep), ("accepted", self.accept))
            if names
        ]
        return "; ".join(parts)
