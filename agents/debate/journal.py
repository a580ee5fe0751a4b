"""The journal of a debate's model calls: how a debate restarted after a crash resumes.

The engine is deterministic given what the models answer, so the answers are the debate's
checkpoint. Each answered call is appended to the unit's journal as it lands (after every
call, so after every round too); a debate started again over the same unit replays the
journal instead of calling the model, arriving at exactly the state the crashed debate had
reached, and goes on from there. Replayed calls are charged to the debate's budgets as before
(the budgets evolve as they did) but not to the shared allowances, which paid for them once.

Each entry carries the digest of the request it answered. Should a replay ever ask something
else (the engine or its prompts changed between the two runs), the rest of the journal is
dropped and the debate goes on live: a changed program pays again, it never replays an
answer to a question it did not ask.
"""

import hashlib
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from agents.models.llm import LLMRequest, LLMResponse


class JournalEntry(BaseModel):
    """One model call as it ended: answered, or refused by the API (billed nothing)."""

    model_config = ConfigDict(frozen=True)

    request: str
    """The digest of the request (:func:`request_digest`)."""
    response: LLMResponse | None = None
    unavailable: str | None = None
    """Why the API refused the call, when it did."""


class Journal(Protocol):
    """Where one unit's calls are kept between attempts (Redis, in the App)."""

    async def entries(self) -> Sequence[JournalEntry]: ...

    async def append(self, entry: JournalEntry) -> None: ...

    async def truncate(self, keep: int) -> None:
        """Keep only the first `keep` entries."""
        ...


def request_digest(request: LLMRequest) -> str:
    """The sha256 of everything a request asks (the tool by name: its schema is code)."""
    # Unset fields left out: a request asks what it asked before they were added.
    # The unit is left out too: a journal is one unit's, whatever the unit is called.
    asked = request.model_dump_json(exclude={"tool", "unit"}, exclude_none=True)
    asked += request.tool.name
    return hashlib.sha256(asked.encode()).hexdigest()


class Replay:
    """A debate's cursor over its journal: the recorded calls first, then live ones."""

    def __init__(self, journal: Journal, recorded: Sequence[JournalEntry]) -> None:
        self.journal = journal
        self._recorded = list(recorded)
        self._position = 0

    @classmethod
    async def open(cls, journal: Journal) -> "Replay":
        return cls(journal, await journal.entries())

    @property
    def replayed(self) -> int:
        """How many calls were answered from the journal so far."""
        return self._position

    async def recorded(self, request: LLMRequest) -> JournalEntry | None:
        """The recorded end of `request`, if the journal has it next; None to call live."""
        if self._position >= len(self._recorded):
            return None
        entry = self._recorded[self._position]
        if entry.request != request_digest(request):
            # The debate asks something the journal did not record: go live from here.
            await self.journal.truncate(self._position)
            self._recorded = self._recorded[: self._position]
            return None
        self._position += 1
        return entry

    async def record(self, entry: JournalEntry) -> None:
        await self.journal.append(entry)


class MemoryJournal:
    """A journal in memory: for tests, and for runs that need no recovery."""

    def __init__(self) -> None:
        self.kept: list[JournalEntry] = []

    async def entries(self) -> Sequence[JournalEntry]:
        return list(self.kept)

    async def append(self, entry: JournalEntry) -> None:
        self.kept.append(entry)

    async def truncate(self, keep: int) -> None:
        del self.kept[keep:]
