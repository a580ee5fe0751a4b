"""Loop detection by hashing normalised messages.

A message is normalised — case folded, whitespace collapsed, digits blanked (line numbers
shift between turns while the argument stays the same) — and hashed with sha256, per edge
and finding. The same hash seen `max_retries` times is a loop; so is an A-B-A-B
oscillation, an agent alternating between two answers.
Code is compared with whitespace collapsed only: changing `10` to `20` in a patch is a
different patch, while "line 10" and "line 12" in an argument are the same argument.
"""

import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from enum import StrEnum

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def normalise_prose(text: str) -> str:
    return _SPACE.sub(" ", _DIGITS.sub("#", text.casefold())).strip()


def normalise_code(code: str) -> str:
    return _SPACE.sub(" ", code).strip()


def message_digest(speaker: str, kind: str, prose: str, code: str | None = None) -> str:
    """The sha256 of a normalised message, as hex."""
    parts = (speaker, kind, normalise_prose(prose), "" if code is None else normalise_code(code))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class LoopKind(StrEnum):
    REPEAT = "repeat"
    OSCILLATION = "oscillation"


@dataclass(frozen=True, slots=True)
class Loop:
    """A detected loop on one edge and finding."""

    edge: str
    finding_id: str
    speaker: str
    kind: LoopKind

    def describe(self) -> str:
        if self.kind is LoopKind.REPEAT:
            return f"{self.speaker} repeated the same message on {self.finding_id}"
        return f"{self.speaker} alternated between two messages on {self.finding_id}"


class LoopMonitor:
    """Counts message hashes per edge and finding and reports loops."""

    def __init__(self, max_retries: int) -> None:
        self.max_retries = max_retries
        self._seen: defaultdict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self._sequences: defaultdict[tuple[str, str, str], list[str]] = defaultdict(list)

    def observe(self, edge: str, finding_id: str, speaker: str, digest: str) -> Loop | None:
        """Record a message; return the loop it completes, if any."""
        seen = self._seen[edge, finding_id]
        seen[digest] += 1
        sequence = self._sequences[edge, finding_id, speaker]
        sequence.append(digest)
        if seen[digest] >= self.max_retries:
            return Loop(edge, finding_id, speaker, LoopKind.REPEAT)
        if _oscillates(sequence):
            return Loop(edge, finding_id, speaker, LoopKind.OSCILLATION)
        return None


def _oscillates(sequence: list[str]) -> bool:
    if len(sequence) < 4:
        return False
    a, b, c, d = sequence[-4:]
    return a == c and b == d and a != b
