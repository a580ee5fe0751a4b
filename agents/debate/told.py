"""What each role is told: the material of a turn, typed as what an agent answers is.

Every answer an agent gives is a model of :mod:`agents.protocol`; every piece of material a
turn shows it is one here, and :mod:`agents.debate.briefs` renders them into the turn's text:
the open findings the coder answers, the answers a tester evaluates, the findings whose tests
passed at the head, the arbiter's disputes, what a finding's test and a patch's test showed,
the items a retry asks again and a person's reply heard.

A shape is rendered as JSON data (:meth:`Told.data`) in the order of its fields, the same on
every turn, since the prompts are cached and every character of a turn is paid for. An
optional entry is absent when it has nothing to say, not null (`Unsaid`, `Unlisted`); a
finding is shown whole, its null fields too, as the tester reported it.
"""

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agents.outcome import Message, MessageKind
from agents.protocol import Answer, Finding, Patch, Stance
from agents.verification import Evidence
from policies.arbitration import ArbitrationTrigger
from policies.panel import Vote

T = TypeVar("T")


def _none(value: object) -> bool:
    return value is None


def _empty(value: tuple[object, ...]) -> bool:
    return not value


Unsaid = Annotated[T | None, Field(exclude_if=_none)]
"""An entry absent, rather than null, when there is nothing to say."""
Unlisted = Annotated[tuple[T, ...], Field(exclude_if=_empty)]
"""A list absent, rather than empty, when it has no item."""


class Told(BaseModel):
    """One shape of what an agent is told."""

    # `constants`: a model's raw item (a refused finding) keeps a NaN it wrote, as JSON would.
    model_config = ConfigDict(
        frozen=True, extra="forbid", serialize_by_alias=True, ser_json_inf_nan="constants"
    )

    def data(self) -> dict[str, Any]:
        """The shape as the JSON data the agent reads."""
        return self.model_dump(mode="json")


class FindingRun(Told):
    """What a finding's test showed, run at the base and the head."""

    verdict: Evidence
    what_it_shows: str
    output_at_head: str


class PatchRun(Told):
    """What a finding's test showed, run at the head with the patch checked on it."""

    verified: bool | None
    what_it_shows: str
    output: str


class Runs(Told):
    """What an agent is told of one finding's tests (:meth:`agents.debate.proofs.Proofs.about`):
    each entry sits beside the finding it is about."""

    test_run: Unsaid[FindingRun] = None
    patch_test_run: Unsaid[PatchRun] = None


Tests = Callable[[str], Runs]
"""What an agent is told of a finding's test runs, by finding id (`agents.debate.proofs`);
given only when tests are run."""


class CoderAnswer(Told):
    """The coder's answer to a finding, under the finding it answers."""

    stance: Stance
    argument: str
    patch: Unsaid[Patch] = None

    @classmethod
    def of(cls, answer: Answer) -> "CoderAnswer":
        return cls(stance=answer.stance, argument=answer.argument, patch=answer.patch)


class Rejection(Told):
    """A panel tester's rejection of the coder's latest answer."""

    tester: str
    reason: str


class OpenFinding(Told):
    """A finding the coder answers: with its tests, its last answer and why it was rejected
    (every tester's reason on a panel, the last one's otherwise)."""

    finding: Finding
    test_run: Unsaid[FindingRun] = None
    patch_test_run: Unsaid[PatchRun] = None
    your_last_answer: Unsaid[CoderAnswer] = None
    testers_rejected_it: Unlisted[Rejection] = ()
    tester_rejected_it_because: Unsaid[str] = None


class OpenFindings(Told):
    """The coder's turn: the open findings, the paths no patch may touch, and the final
    rulings made since it last spoke."""

    open_findings: tuple[OpenFinding, ...]
    protected_paths: tuple[str, ...]
    final_rulings: Unlisted[str] = ()


class HeardPosition(Told):
    """What a tester a panel tester hears said last about a finding, and in which round."""

    tester: str
    round: int
    vote: Vote
    reason: str


class AnsweredFinding(Told):
    """An answer a tester evaluates: the finding, the coder's answer, the lines its patch
    replaces, the tests; on a panel, who raised it and what the testers it hears said."""

    finding: Finding
    coder_answer: CoderAnswer
    lines_the_patch_replaces: Unsaid[tuple[str, ...]] = None
    test_run: Unsaid[FindingRun] = None
    patch_test_run: Unsaid[PatchRun] = None
    raised_by: Unsaid[tuple[str, ...]] = None
    testers_you_hear: Unlisted[HeardPosition] = ()


class RetestedFinding(Told):
    """A finding whose test passed at the head, for its tester's next test or withdrawal."""

    finding: Finding
    test_run: Unsaid[FindingRun] = None
    patch_test_run: Unsaid[PatchRun] = None


class LatestMessage(Told):
    """One of a finding's latest messages: who said it, what kind, and the patch it gave."""

    speaker: str = Field(serialization_alias="from")
    kind: MessageKind
    text: str
    patch: Unsaid[Patch] = None

    @classmethod
    def of(cls, message: Message) -> "LatestMessage":
        return cls(
            speaker=message.speaker, kind=message.kind, text=message.text, patch=message.patch
        )


class Dispute(Told):
    """A finding the arbiter rules on: why it came, its latest messages, on a panel the
    testers' latest votes, and its tests."""

    finding: Finding
    why_it_reached_you: ArbitrationTrigger
    latest_messages: tuple[LatestMessage, ...]
    testers_keeping_it: Unsaid[tuple[str, ...]] = None
    testers_accepting_the_answer: Unsaid[tuple[str, ...]] = None
    test_run: Unsaid[FindingRun] = None
    patch_test_run: Unsaid[PatchRun] = None


class Disputes(Told):
    """The arbiter's turn: the disputes, and the paths no forced fix may touch."""

    disputes: tuple[Dispute, ...]
    protected_paths: tuple[str, ...]


class RefusedItem(Told):
    """An item of a tool input refused, asked again: the finding it was about, or the finding
    it raised as the agent wrote it, and why it was refused."""

    finding_id: Unsaid[str] = None
    finding: Unsaid[Any] = None
    """Model output, unchecked: whatever the agent gave as the item."""
    problems: tuple[str, ...]


class Refused(Told):
    """A retry's items, and why the call before it was refused whole, if it was."""

    refused: tuple[RefusedItem, ...]
    last_call_refused_because: Unlisted[str] = ()


class Replied(Told):
    """What a person wrote on a finding's thread, and who (`@login`)."""

    speaker: str = Field(serialization_alias="from")
    text: str


class ReplyHeard(Told):
    """A person's reply for the tester who raised the finding, with the finding's latest
    messages (without their patches)."""

    finding: Finding
    latest_messages: tuple[LatestMessage, ...]
    reply: Replied
