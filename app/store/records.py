"""The records Tiebreak keeps as Redis hashes, one typed model each, written and read through
it: a run's coordinator (:class:`RunStatus`), one of its units (:class:`UnitStatus`), an
installation (:class:`InstallationStatus`). Each field is stored under the name
:mod:`app.store.keys` gives it.

A write changes the fields set on the record it is given, and those alone (as pydantic tells
them apart: `model_fields_set`), so that two writers of one hash never undo each other's
fields; a read takes what the hash holds and leaves the rest at the model's defaults. A field
no model names, such as one an older worker wrote, is ignored.
"""

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from agents.models.llm import Role
from app.events import PullRequestRef
from app.store.keys import AGENT_FIELDS, InstallationField, RunField, UnitField, agent_field

HashFields = dict[str, str | int | float]
"""A hash's fields as redis-py's `HSET` takes them."""


class State(StrEnum):
    """The lifecycle of a run, a unit and an agent."""

    INITIALIZING = "initializing"
    ACTIVE = "active"
    WAITING = "waiting"
    TESTING = "testing"
    """A unit whose debate waits for its findings' tests, running in the repository's CI: no
    worker runs it meanwhile, and it is neither dead nor failed."""
    COMPLETING = "completing"
    COMPLETE = "complete"
    FAILED = "failed"


STARTED = frozenset({State.INITIALIZING, State.ACTIVE, State.COMPLETING})
"""The states of a unit some worker is running: one with a lapsed heartbeat is dead."""

ENDED = frozenset({State.COMPLETE, State.FAILED})


def _stored(value: Any) -> str | int | float:
    """A field's value as Redis stores it: booleans as 0 or 1, nothing as ''."""
    if isinstance(value, bool):
        return int(value)
    if value is None:
        return ""
    if isinstance(value, str | int | float):
        return value
    raise TypeError(f"{type(value).__name__} is not a hash field's value")


def _nothing(value: object) -> object:
    return None if value == "" else value


NoneIfEmpty = BeforeValidator(_nothing)
"""'' read back as None: how a field set to nothing is stored."""

RefJson = Annotated[
    PullRequestRef,
    BeforeValidator(lambda raw: json.loads(raw) if isinstance(raw, str | bytes) else raw),
    PlainSerializer(lambda ref: ref.model_dump_json(), return_type=str),
]
"""A pull request head, stored as its JSON."""


class HashRecord(BaseModel):
    """A record kept as a Redis hash, each field under its alias (its name in
    :mod:`app.store.keys`). A field the model does not have is left out as a hash is read,
    and refused as a record is made (by mypy's pydantic plugin, before anything runs)."""

    model_config = ConfigDict(
        validate_by_name=True, validate_by_alias=True, extra="forbid", frozen=True
    )

    def fields(self) -> HashFields:
        """The fields set on this record, as its hash stores them: what a write changes."""
        dumped = self.model_dump(mode="json", by_alias=True, exclude_unset=True, round_trip=True)
        return {str(name): _stored(value) for name, value in dumped.items()}

    @classmethod
    def read(cls, raw: Mapping[bytes, bytes]) -> Self:
        """The record a hash holds; raises ValueError for a field that is not text, or not
        of its type."""
        return cls.model_validate(cls._known(raw))

    @classmethod
    def _known(cls, raw: Mapping[bytes, bytes]) -> dict[str, object]:
        """The fields of `raw` this model has, as text."""
        stored = {k.decode(): v.decode() for k, v in raw.items()}
        names = {str(field.alias or name) for name, field in cls.model_fields.items()}
        return {k: v for k, v in stored.items() if k in names}


class RunStatus(HashRecord):
    """A run's coordinator as its hash (:func:`app.store.keys.run`) describes it, and what it
    takes to start it again."""

    state: State | None = Field(None, alias=RunField.STATE)
    worker: str = Field("", alias=RunField.WORKER)
    """The worker of the coordinator that wrote last."""
    units: int = Field(0, alias=RunField.UNITS)
    started: float | None = Field(None, alias=RunField.STARTED)
    """When the run was first written (seconds since the epoch)."""
    ref: RefJson | None = Field(None, alias=RunField.REF)
    trigger: Annotated[str | None, NoneIfEmpty] = Field(None, alias=RunField.TRIGGER)
    """The event that asked for an automatic review; None for a review a person asked for."""
    resumes: int = Field(0, alias=RunField.RESUMES)
    """How many coordinators were queued to pick the run up from one that died."""
    check_run: Annotated[int | None, NoneIfEmpty] = Field(None, alias=RunField.CHECK_RUN)
    """The run's check run, once it is open: a coordinator that starts the run again before
    its plan was written completes that one rather than opening another."""


class UnitStatus(HashRecord):
    """One unit as its hash (:func:`app.store.keys.unit`) describes it."""

    number: int = Field(exclude=True)
    """The unit's number in its run: its key's, not a field."""
    state: State = Field(State.WAITING, alias=UnitField.STATE)
    attempt: int = Field(1, alias=UnitField.ATTEMPT)
    worker: str = Field("", alias=UnitField.WORKER)
    round: int = Field(0, alias=UnitField.ROUND)
    calls: int = Field(0, alias=UnitField.CALLS)
    """Model calls answered, the calls of earlier attempts replayed from the journal included."""
    tokens: int = Field(0, alias=UnitField.TOKENS)
    error: str = Field("", alias=UnitField.ERROR)
    fatal: bool = Field(False, alias=UnitField.FATAL)
    """Whether the unit failed for a reason no fresh attempt can help (a bad key)."""
    agents: dict[Role, State] = Field({}, exclude=True)
    """Each agent's state, a field each (:func:`app.store.keys.agent_field`)."""
    updated: float = Field(0.0, alias=UnitField.UPDATED)

    def fields(self) -> HashFields:
        agents = {agent_field(role): state.value for role, state in self.agents.items()}
        return {**super().fields(), **agents}

    @classmethod
    def read_unit(cls, number: int, raw: Mapping[bytes, bytes]) -> Self:
        """Unit `number` as its hash holds it (raises ValueError as :meth:`read` does)."""
        prefix = AGENT_FIELDS.encode()
        agents = {
            k.removeprefix(prefix).decode(): v.decode()
            for k, v in raw.items()
            if k.startswith(prefix)
        }
        # The number is the key's, the agents each a field of their own.
        return cls.model_validate({**cls._known(raw), "number": number, "agents": agents})


class InstallationStatus(HashRecord):
    """Where the App is installed, as its hash (:func:`app.store.keys.installation`) keeps it
    for operators to read."""

    account: str = Field("", alias=InstallationField.ACCOUNT)
    active: bool = Field(True, alias=InstallationField.ACTIVE)
    """False while the installation is suspended."""
