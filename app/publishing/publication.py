"""What Tiebreak sends to GitHub for a run, as data: the review, the summary, the replies, the
check run, the label.

Each request's body is one of :mod:`app.bodies`' validated models; :class:`Publication` holds
those of one run. :class:`RunInfo` says which run is published and under which of the
repository's choices; :class:`RunRecord` is what is remembered of it.
"""

from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, StringConstraints

from agents.diff import Diff, DiffFile, ReviewUnit
from agents.outcome import FindingOutcome
from agents.pull_changes import PullChanges
from agents.review import Review
from agents.verification import Retest, Verification
from app.bodies import (
    LIMIT,
    Annotation,
    CheckRunOutput,
    Conclusion,
    ReviewDraft,
    ReviewEvent,
    Text,
)
from app.events import PullRequestRef
from app.publishing.markers import RUN_ID
from policies.config import RepoConfig
from policies.debate import DebatePolicy

ANNOTATIONS_PER_REQUEST = 50
"""GitHub's limit on annotations per check run request; further requests append."""


class LabelAction(StrEnum):
    ADD = "add"
    REMOVE = "remove"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Spend(_Frozen):
    """What a run spent, and what its installation has left today."""

    spent: int
    """Billed tokens this run spent."""
    ceiling: int
    daily_remaining: int
    daily_cap: int


class RunInfo(_Frozen):
    """The run being published, and the repository's choices for it."""

    run_id: Annotated[str, StringConstraints(pattern=rf"^{RUN_ID}$")]
    head_sha: Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{7,64}$")]
    details_url: AnyHttpUrl | None = None
    """Where the debate's transcript is (`/runs/{id}`); linked from the summary."""
    pull_url: AnyHttpUrl | None = None
    """The pull request's page, for links to its threads."""
    label: Annotated[str, StringConstraints(min_length=1, max_length=50)] = "Unresolved"
    event_on_unresolved: ReviewEvent = ReviewEvent.COMMENT
    max_inline_comments: Annotated[int, Field(ge=0)] = 10
    """New inline comments beyond this many (least severe first) are listed in the summary."""
    spend: Spend | None = None
    notes: tuple[str, ...] = ()
    """Lines of Tiebreak's own Markdown for the summary: what the config left out."""

    @classmethod
    def of(cls, config: RepoConfig, *, run_id: str, head_sha: str, **more: Any) -> Self:
        """A run under a repository's config."""
        return cls(
            run_id=run_id,
            head_sha=head_sha,
            label=config.label,
            event_on_unresolved=ReviewEvent(config.review_event_on_unresolved),
            max_inline_comments=config.max_inline_comments,
            **more,
        )


class GoneFinding(_Frozen):
    """An earlier unresolved finding a run no longer finds: the code it was about changed."""

    result: FindingOutcome
    thread: int | None = None
    """The first comment of its review thread, if it was posted inline."""
    answer: bool = False
    """Whether its thread gets a reply now (not yet answered, not dismissed)."""


class FollowUp(_Frozen):
    """A proven finding's test run again at a later run's head (:mod:`app.review.following`),
    and what it shows there."""

    key: str
    """The finding in the run that carried it before, `unit/finding`."""
    result: FindingOutcome
    """The finding as that run left it: open, proven by its test."""
    test: str
    """The test's path."""
    verification: Verification | None = None
    """The test's run at this head (and the base, as it ran when it proved the finding); None
    when it was not run, a person having ended the finding."""
    retest: Retest
    reason: str
    """What the run at this head showed, in words."""

    @classmethod
    def of(cls, key: str, result: FindingOutcome, verification: Verification) -> Self:
        retest, reason = verification.retested()
        shown = {"verification": verification, "retest": retest, "reason": reason}
        return cls(key=key, result=result, test=verification.test, **shown)

    @classmethod
    def unrun(cls, key: str, result: FindingOutcome, test: str) -> Self:
        """Not run: a person ended the finding (see :class:`FollowedThread`)."""
        why = "a person ended the finding"
        return cls(key=key, result=result, test=test, retest=Retest.NOT_RUN, reason=why)

    @property
    def output(self) -> str:
        """The end of what the test printed at this head."""
        return self.verification.output_tail if self.verification is not None else ""


class FollowedThread(_Frozen):
    """A followed finding as this run leaves it: its test's run at the head, its thread."""

    follow: FollowUp
    thread: int | None = None
    """The first comment of its review thread, if it was posted inline."""
    note: int | None = None
    """Tiebreak's note in that thread on the test's latest run, edited in place."""
    answer: bool = False
    """Its test passes and its thread is not yet answered so: answered and resolved now."""
    ended: bool = False
    """A person ended the finding (a writer resolved its thread or marked it 👎): its test
    no longer follows it, and this run's run of it decides nothing."""


def finding_key(unit_id: str, finding_id: str) -> str:
    """A finding's name across a run's units, `unit/finding`: the keys of
    :attr:`Conversation.threads`, and its label where a review has several units."""
    return f"{unit_id}/{finding_id}"


class Conversation(_Frozen):
    """What the pull request already shows of earlier runs, as this run reconciled it."""

    threads: dict[str, int] = {}
    """`unit/finding` → the first comment of the thread the pull request has for it."""
    gone: list[GoneFinding] = []
    since: str | None = None
    """The earlier head whose changes since this run reviewed; None for a full review."""
    why_full: str = ""
    """Why every file was reviewed, when that is news (a force-push, a changed config)."""
    reviewed_files: int = 0
    carried: int = 0
    """Earlier findings that stand unchanged."""
    dismissed: int = 0
    """Findings not raised again because a writer (or Tiebreak) resolved their thread, or a
    writer marked it 👎."""
    followed: list[FollowedThread] = []
    """The earlier proven findings whose tests this run ran again at its head."""


class ThreadReply(_Frozen):
    """A reply in a review thread: `POST .../pulls/{n}/comments/{thread}/replies`."""

    thread: int
    body: Text


class ThreadNote(_Frozen):
    """Tiebreak's one note in a review thread: replied the first time, then edited in place
    (`PATCH .../pulls/comments/{note}`)."""

    thread: int
    note: int | None = None
    """The note already there, to edit; None: reply."""
    body: Text


class CheckRunResult(_Frozen):
    """A completed check run: its conclusion and output, annotations in request-sized batches."""

    conclusion: Conclusion
    title: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    summary: Text
    text: Annotated[str, StringConstraints(max_length=LIMIT)] = ""
    annotation_batches: list[
        Annotated[list[Annotation], Field(min_length=1, max_length=ANNOTATIONS_PER_REQUEST)]
    ] = []

    def outputs(self) -> list[CheckRunOutput]:
        """The `output` of each request, in order: the first completes the run, the others
        append their annotations (GitHub keeps the annotations of earlier requests)."""
        base = CheckRunOutput(title=self.title, summary=self.summary, text=self.text or None)
        batches = self.annotation_batches or [[]]
        return [base.model_copy(update={"annotations": b or None}) for b in batches]


class Publication(_Frozen):
    """Everything one finished review sends to GitHub."""

    review: ReviewDraft | None
    """None when there is nothing new to say inline."""
    summary: Text
    """The pull request's summary comment, which this run edits (or writes the first time)."""
    replies: list[ThreadReply] = []
    notes: list[ThreadNote] = []
    """The notes on followed findings' threads: their tests' runs at this head."""
    resolve: list[int] = []
    """The threads (by their first comments) of followed findings whose tests pass now."""
    check: CheckRunResult
    label: LabelAction
    label_name: str


class UnitReading(BaseModel):
    """What a unit's agents read beside its diff: later commands give the arbiter, or the
    tester weighing a person's reply, the same."""

    model_config = ConfigDict(frozen=True)

    context: str = ""
    guidance: str = ""
    learned: tuple[str, ...] = ()
    """The repository's learnings in `guidance`, each as the agents read it."""
    intent: str = ""
    """What the pull request said it does when the run read it."""


class UnitFile(_Frozen):
    """One file of a unit's slice of its run's diff, as a record keeps it: the file's path,
    and which of its hunks the unit holds when the file, too large for one unit, was cut at
    hunk boundaries (:meth:`agents.diff.Diff.units`)."""

    path: str
    hunks: tuple[int, int] | None = None
    """The unit's hunks of the file, from the first up to the second (not included), by
    their order in the file's diff; None: all of them."""

    @classmethod
    def of(cls, part: DiffFile, whole: Diff) -> Self:
        """`part`, a unit's piece of one of the files of `whole`."""
        full = whole.file(part.path)
        if full is None or not part.hunks or len(part.hunks) == len(full.hunks):
            return cls(path=part.path)
        first = full.hunks.index(part.hunks[0])
        return cls(path=part.path, hunks=(first, first + len(part.hunks)))

    def part_of(self, whole: Diff) -> DiffFile | None:
        """This file's piece of `whole`; None when `whole` has none of it."""
        full = whole.file(self.path)
        if full is None or self.hunks is None:
            return full
        hunks = full.hunks[self.hunks[0] : self.hunks[1]]
        return full.with_hunks(hunks) if hunks else None


def unit_files(unit: ReviewUnit, whole: Diff) -> tuple[UnitFile, ...]:
    """Where `unit`'s slice lies in `whole`, the diff it was cut from."""
    return tuple(UnitFile.of(f, whole) for f in unit.diff.files)


class RunRecord(BaseModel):
    """One finished review run of a pull request head."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    ref: PullRequestRef
    check_run_id: int
    conclusion: str
    review: Review
    diff: str
    changes: PullChanges | None = None
    """The whole pull request's changed lines, which its units checked citations against
    (`agents.pull_changes`); None for a run recorded before they were kept: its diff's."""
    policy: DebatePolicy = DebatePolicy()
    """The policy the run debated under, for a later arbitration."""
    config: RepoConfig = RepoConfig()
    """The repository's config for the run, for publishing what later commands change."""
    details_url: str | None = None
    """The link to the run's transcript, if it has one."""
    conversation: Conversation = Conversation()
    """What the pull request showed of earlier runs when this one published, for commands
    that publish the run's summary again."""
    readings: dict[str, UnitReading] = {}
    """What each unit's agents read beside the diff, by unit id (none for a unit that read
    nothing more)."""

    unit_files: dict[str, tuple[UnitFile, ...]] = {}
    """Each unit's slice of `diff`, by unit id, and the slices of the carried units with
    findings (as the runs that debated them cut them): a rescoped run's units are cut from
    the files it reviewed alone, and at the worker's unit size, so its diff split again
    would give other units. Empty for a run recorded before they were kept (see
    :meth:`unit_slices`)."""

    def unit_slices(self) -> dict[str, tuple[UnitFile, ...]]:
        """Each unit's slice of `diff`, by unit id: as kept, or for a run recorded before
        they were, its diff split again as a first review splits it (a rescoped run's units
        may have been other)."""
        return self._slices(Diff.parse(self.diff, allow_empty=True))

    def review_units(self) -> dict[str, ReviewUnit]:
        """The run's review units by id, each with what its agents read beside the diff."""
        diff = Diff.parse(self.diff, allow_empty=True)
        changes = self.changes or diff.changes()
        none = UnitReading()
        units = {}
        for unit_id, files in self._slices(diff).items():
            parts = (f.part_of(diff) for f in files)
            r = self.readings.get(unit_id, none)
            units[unit_id] = ReviewUnit(
                unit_id,
                Diff(tuple(p for p in parts if p is not None)),
                context=r.context,
                guidance=r.guidance,
                learned=r.learned,
                intent=r.intent,
                changes=changes,
            )
        return units

    def _slices(self, diff: Diff) -> dict[str, tuple[UnitFile, ...]]:
        """:meth:`unit_slices`, of `diff`, the record's own parsed."""
        return self.unit_files or {unit.id: unit_files(unit, diff) for unit in diff.units()}

    def run_info(self) -> RunInfo:
        return RunInfo.of(
            self.config,
            run_id=self.run_id,
            head_sha=self.ref.head_sha,
            details_url=self.details_url,
        )
