"""What each role is told: the material of a turn, typed as what an agent answers is.

Every answer an agent gives is a model of :mod:`agents.protocol`; every piece of material a
turn shows it is one here, and :mod:`agents.debate.briefs` renders them into the turn's text:
the open findings the coder answers, the answers a tester evaluates, the findings whose tests
passed at the head, the arbiter's disputes, what a finding's test and a patch's test showed,
the items a retry asks again and a person's reply heard.

A shape is rendered as JSON data (:meth:`Told.data`) in the order of its fields, the same on
every turn, since the prompts are cached and every character of a turn is paid for. An
optional entry is absent when it has nothing to say, not null (`UNSAID`, `UNLISTED`); a
finding is shown whole, its null fields too, as the tester reported it.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import Enum
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from agents.outcome import Message, MessageKind
from agents.protocol import Answer, Citation, Finding, Patch, Stance
from agents.verification import Evidence
from policies.arbitration import ArbitrationTrigger
from policies.panel import Vote

_ABSENT = "absent_when"
_KEY = "key"


UNSAID = MappingProxyType({_ABSENT: "none"})
"""A field's metadata: the entry is absent, rather than null, when there is nothing to say."""
UNLISTED = MappingProxyType({_ABSENT: "empty"})
"""A field's metadata: the list is absent, rather than empty, when it has no item."""
FROM = MappingProxyType({_KEY: "from"})
"""A field's metadata: the agent reads it as `from`, a word Python keeps."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Told:
    """One shape of what an agent is told.

    Frozen dataclasses rather than validating models: every value is built from the
    debate's own typed state, and a turn builds several of them (a model's validation
    would cost the engine more than all the rest of a brief)."""

    def data(self) -> dict[str, Any]:
        """The shape as the JSON data the agent reads, in the order of its fields."""
        data: dict[str, Any] = {}
        for name, key, absent in _layout(type(self)):
            value = getattr(self, name)
            if (absent == "none" and value is None) or (absent == "empty" and not value):
                continue
            data[key] = _json(value)
        return data


Layout = tuple[tuple[str, str, str | None], ...]
_LAYOUTS: dict[type[Told], Layout] = {}


def _layout(shape: type[Told]) -> Layout:
    """Each field of `shape`: its name, its key, and when it is absent (read once a shape)."""
    layout = _LAYOUTS.get(shape)
    if layout is None:
        layout = tuple(
            (f.name, f.metadata.get(_KEY, f.name), f.metadata.get(_ABSENT)) for f in fields(shape)
        )
        _LAYOUTS[shape] = layout
    return layout


def _json(value: Any) -> Any:
    """`value` as JSON data: a finding or a patch whole (its null fields too), as the agent
    gave it; an enumeration by its value."""
    if isinstance(value, Told):
        return value.data()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [_json(item) for item in value]
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class FindingRun(Told):
    """What a finding's test showed, run at the base and the head."""

    verdict: Evidence
    what_it_shows: str
    output_at_head: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchRun(Told):
    """What a finding's test showed, run at the head with the patch checked on it."""

    verified: bool | None
    what_it_shows: str
    output: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Runs(Told):
    """What an agent is told of one finding's tests (:meth:`agents.debate.proofs.Proofs.about`):
    each entry sits beside the finding it is about."""

    test_run: FindingRun | None = field(default=None, metadata=UNSAID)
    patch_test_run: PatchRun | None = field(default=None, metadata=UNSAID)


Tests = Callable[[str], Runs]
"""What an agent is told of a finding's test runs, by finding id (`agents.debate.proofs`);
given only when tests are run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CoderAnswer(Told):
    """The coder's answer to a finding, under the finding it answers."""

    stance: Stance
    argument: str
    patch: Patch | None = field(default=None, metadata=UNSAID)
    citations: tuple[Citation, ...] = field(default=(), metadata=UNLISTED)

    @classmethod
    def of(cls, answer: Answer) -> "CoderAnswer":
        return cls(
            stance=answer.stance,
            argument=answer.argument,
            patch=answer.patch,
            citations=tuple(answer.citations),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejection(Told):
    """A panel tester's rejection of the coder's latest answer."""

    tester: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenFinding(Told):
    """A finding the coder answers: with its tests, its last answer and why it was rejected
    (every tester's reason on a panel, the last one's otherwise)."""

    finding: Finding
    test_run: FindingRun | None = field(default=None, metadata=UNSAID)
    patch_test_run: PatchRun | None = field(default=None, metadata=UNSAID)
    your_last_answer: CoderAnswer | None = field(default=None, metadata=UNSAID)
    testers_rejected_it: tuple[Rejection, ...] = field(default=(), metadata=UNLISTED)
    tester_rejected_it_because: str | None = field(default=None, metadata=UNSAID)


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenFindings(Told):
    """The coder's turn: the open findings, the paths no patch may touch, and the final
    rulings made since it last spoke."""

    open_findings: tuple[OpenFinding, ...]
    protected_paths: tuple[str, ...]
    final_rulings: tuple[str, ...] = field(default=(), metadata=UNLISTED)


@dataclass(frozen=True, slots=True, kw_only=True)
class HeardPosition(Told):
    """What a tester a panel tester hears said last about a finding, and in which round."""

    tester: str
    round: int
    vote: Vote
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AnsweredFinding(Told):
    """An answer a tester evaluates: the finding, the coder's answer, the lines its patch
    replaces, the tests; on a panel, who raised it and what the testers it hears said."""

    finding: Finding
    coder_answer: CoderAnswer
    lines_the_patch_replaces: tuple[str, ...] | None = field(default=None, metadata=UNSAID)
    test_run: FindingRun | None = field(default=None, metadata=UNSAID)
    patch_test_run: PatchRun | None = field(default=None, metadata=UNSAID)
    raised_by: tuple[str, ...] | None = field(default=None, metadata=UNSAID)
    testers_you_hear: tuple[HeardPosition, ...] = field(default=(), metadata=UNLISTED)
    intent_checked: str | None = field(default=None, metadata=UNSAID)
    """What Tiebreak checked of an intended answer's evidence."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RetestedFinding(Told):
    """A finding whose test passed at the head, for its tester's next test or withdrawal."""

    finding: Finding
    test_run: FindingRun | None = field(default=None, metadata=UNSAID)
    patch_test_run: PatchRun | None = field(default=None, metadata=UNSAID)


@dataclass(frozen=True, slots=True, kw_only=True)
class LatestMessage(Told):
    """One of a finding's latest messages: who said it, what kind, and the patch it gave."""

    speaker: str = field(metadata=FROM)
    kind: MessageKind
    text: str
    patch: Patch | None = field(default=None, metadata=UNSAID)

    @classmethod
    def of(cls, message: Message) -> "LatestMessage":
        return cls(
            speaker=message.speaker, kind=message.kind, text=message.text, patch=message.patch
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Dispute(Told):
    """A finding the arbiter rules on: why it came, its latest messages, on a panel the
    testers' latest votes, and its tests."""

    finding: Finding
    why_it_reached_you: ArbitrationTrigger
    latest_messages: tuple[LatestMessage, ...]
    testers_keeping_it: tuple[str, ...] | None = field(default=None, metadata=UNSAID)
    testers_accepting_the_answer: tuple[str, ...] | None = field(default=None, metadata=UNSAID)
    test_run: FindingRun | None = field(default=None, metadata=UNSAID)
    patch_test_run: PatchRun | None = field(default=None, metadata=UNSAID)


@dataclass(frozen=True, slots=True, kw_only=True)
class Disputes(Told):
    """The arbiter's turn: the disputes, and the paths no forced fix may touch."""

    disputes: tuple[Dispute, ...]
    protected_paths: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusedItem(Told):
    """An item of a tool input refused, asked again: the finding it was about, or the finding
    it raised as the agent wrote it, and why it was refused."""

    finding_id: str | None = field(default=None, metadata=UNSAID)
    finding: Any | None = field(default=None, metadata=UNSAID)
    """Model output, unchecked: whatever the agent gave as the item."""
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Refused(Told):
    """A retry's items, and why the call before it was refused whole, if it was."""

    refused: tuple[RefusedItem, ...]
    last_call_refused_because: tuple[str, ...] = field(default=(), metadata=UNLISTED)


@dataclass(frozen=True, slots=True, kw_only=True)
class Replied(Told):
    """What a person wrote on a finding's thread, and who (`@login`)."""

    speaker: str = field(metadata=FROM)
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyHeard(Told):
    """A person's reply for the tester who raised the finding, with the finding's latest
    messages (without their patches)."""

    finding: Finding
    latest_messages: tuple[LatestMessage, ...]
    reply: Replied
