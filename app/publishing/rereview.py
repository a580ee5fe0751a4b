"""Re-reviews: what a run adds to the conversation a pull request already has.

A pull request is reviewed again on every push, and people answer Tiebreak in between. A run
reviews only the files changed since the last reviewed head (:class:`RunScope`) and then
reconciles what it found with what is already there (:func:`reconcile`):

- a finding the pull request already has a thread for (the same fingerprint: see
  :mod:`app.publishing.fingerprints`) is not posted again; it stands, linked to its thread;
- a finding whose thread a writer or Tiebreak resolved, or that a writer marked 👎, is
  dropped: not raised again while its code is unchanged (changed code has another
  fingerprint, so it can be raised anew);
- a finding that stands (not withdrawn) whose thread someone else resolved — the pull
  request's author without write access — has its thread reopened;
- an earlier finding on a file this run did not review stands as it was (carried forward);
  so does one on a reviewed file whose code, at its lines, did not change. A fixed
  finding's code includes the lines its fix replaces, wherever they are: a fix whose lines
  are not, in this run's diff, what they were at the same place is not carried, nor is its
  finding, so no suggestion or commit of it lands on other lines;
- an earlier finding on a reviewed file that is raised again (the same claim on the same
  file) is replaced by this run's debate of it, posted anew only if its code changed;
- an earlier finding on a reviewed file that is not raised again and whose code changed is
  no longer found: if it was unresolved, its thread gets a short reply;
- an earlier proven finding whose test ran again at this head (:mod:`app.publishing.following`)
  is what its test shows, whatever this run's debate says: still open while it fails, fixed
  once it passes. Raised again (the same claim on the same file), this run's finding is
  merged into it: not posted beside it, its debate deciding nothing. A run that did not run
  as a test leaves it to the rules above. A person who ended it ended its following too.

All of it is pure: the review job reads the pull request and calls this.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from agents.debate.claims import same_gist
from agents.diff import Diff
from agents.outcome import FindingOutcome, Outcome, Resolution, StopReason
from agents.patches import current_lines
from agents.protocol import Patch, UnitWalkthrough
from agents.review import Review
from agents.verification import Retest
from app.publishing.fingerprints import Fingerprint, around
from app.publishing.publication import (
    FollowedThread,
    FollowUp,
    GoneFinding,
    RunRecord,
    UnitFile,
    UnitReading,
    finding_key,
)


class RunScope(BaseModel):
    """The files a run reviews: all of them, or those changed since an earlier head."""

    model_config = ConfigDict(frozen=True)

    since: str | None = None
    """The earlier reviewed head whose changes since are reviewed; None for a full review."""
    paths: frozenset[str] = frozenset()
    """With `since`: the files changed since it (old and new names)."""
    why_full: str = ""
    """Without `since`: why every file is reviewed again (empty for a first review)."""

    @classmethod
    def full(cls, why: str) -> "RunScope":
        return cls(why_full=why)

    @classmethod
    def changed_since(cls, head: str, paths: frozenset[str]) -> "RunScope":
        return cls(since=head, paths=paths, why_full="")

    def reviews(self, path: str) -> bool:
        return self.since is None or path in self.paths

    def part(self, diff: Diff) -> Diff:
        """The part of `diff` this run debates."""
        return Diff(tuple(f for f in diff.files if self.reviews(f.path)))


class ThreadState(StrEnum):
    """Whether a finding's thread is resolved, and whether who resolved it counts. GitHub
    lets the pull request's author resolve its threads without write access: only Tiebreak's
    resolving and a writer's dismiss a finding."""

    OPEN = "open"
    BY_TIEBREAK = "tiebreak"
    """Tiebreak resolved it, having withdrawn its finding there or said its test passes, or
    on a writer's `/tiebreak resolve` (whoever resolved it before or after): it counts."""
    BY_WRITER = "writer"
    """A person who may write to the repository resolved it, as a review asked: it counts."""
    BY_PERSON = "person"
    """A person resolved it, not (yet) known to write: it does not count, nor is it undone."""
    DISREGARDED = "disregarded"
    """Someone who may not write resolved it, or someone GitHub does not name (another App,
    a deleted account): it does not count, and the thread is reopened while its finding
    stands (and is not withdrawn)."""


class PostedThread(BaseModel):
    """A review thread Tiebreak started on the pull request, as people left it."""

    model_config = ConfigDict(frozen=True)

    comment_id: int
    """Its first comment: Tiebreak's, carrying the finding's fingerprint."""
    fingerprint: Fingerprint
    state: ThreadState = ThreadState.OPEN
    resolver: str = ""
    """Who resolved it, as GitHub names them (empty when it names no user)."""
    thumbs_down: bool = False
    """Someone reacted 👎 to Tiebreak's comment (who, and whether it counts, a review asks:
    :mod:`app.review.thumbs_down`)."""
    refused_by: str = ""
    """The first person with write access who reacted 👎 to it, once a review asked."""
    answered: bool = False
    """Tiebreak has already replied that the finding is no longer found."""
    note: int | None = None
    """Tiebreak's note on the latest run of the finding's test at a later head, if any."""
    fixed: bool = False
    """Tiebreak has already replied that the finding's test passes: it is fixed."""
    reopened: bool = False
    """Tiebreak has already replied, on reopening it, that the thread was not its resolver's to
    resolve."""

    @property
    def resolved(self) -> bool:
        """The thread is resolved on GitHub, by whoever resolved it."""
        return self.state is not ThreadState.OPEN

    @property
    def settled(self) -> bool:
        """Resolved by someone whose resolving counts: Tiebreak, or a writer."""
        return self.state in (ThreadState.BY_TIEBREAK, ThreadState.BY_WRITER)

    @property
    def dismissed(self) -> bool:
        """Tiebreak or a writer resolved the thread, or a writer marked the finding 👎."""
        return self.settled or bool(self.refused_by)


@dataclass(frozen=True)
class Standing:
    """The pull request's findings after this run, and what changed since the last."""

    review: Review
    """This run's units (less what people dismissed) and the earlier units carried forward."""
    threads: dict[str, int] = field(default_factory=dict)
    """`unit/finding` → the thread the pull request already has for that finding."""
    gone: list[GoneFinding] = field(default_factory=list)
    """Earlier unresolved findings this run no longer finds (their code changed)."""
    dismissed: int = 0
    """Findings left out because a writer (or Tiebreak) resolved their thread or a writer
    marked it 👎."""
    carried: int = 0
    """Earlier findings that stand unchanged."""
    reopen: list[PostedThread] = field(default_factory=list)
    """The threads of findings that stand (not withdrawn) which someone who may not write
    resolved: to be reopened."""
    followed: list[FollowedThread] = field(default_factory=list)
    """The earlier proven findings whose tests ran again at this head, as this run leaves
    them."""
    unit_files: dict[str, tuple[UnitFile, ...]] = field(default_factory=dict)
    """The slices of the diff of the carried units with findings, by their ids here, as
    the runs that debated them cut them: their files did not change since."""
    readings: dict[str, UnitReading] = field(default_factory=dict)
    """What the carried units with findings read beside their diffs, by their ids here."""


def reconcile(
    debated: Review,
    diff: Diff,
    *,
    scope: RunScope,
    earlier: RunRecord | None,
    threads: Sequence[PostedThread],
    follow_ups: Sequence[FollowUp] = (),
) -> Standing:
    """What stands on the pull request whose whole diff (in the config's scope) is `diff`
    after this run `debated` the part of it in `scope`, and its earlier proven findings'
    tests showed `follow_ups` at its head."""
    ledger = _Ledger(threads, follow_ups)
    if earlier is not None:
        ledger.decided = _decided(follow_ups, earlier)
    units = [ledger.this_run(unit, diff) for unit in debated.units]
    gone: list[GoneFinding] = []
    carried: list[Outcome] = []
    if earlier is not None:
        carried, gone = ledger.carried(earlier, diff, scope)
    return Standing(
        review=Review(units=[*units, *carried], estimate=debated.estimate),
        threads=ledger.posted,
        gone=gone,
        dismissed=len(ledger.dismissed),
        carried=sum(len(u.findings) for u in carried) - ledger.kept_by_test,
        reopen=list(ledger.reopen.values()),
        followed=ledger.followed,
        unit_files=ledger.unit_files,
        readings=ledger.readings,
    )


class _Ledger:
    """The pull request's threads, and what a reconciliation made of them so far."""

    def __init__(self, threads: Sequence[PostedThread], follow_ups: Sequence[FollowUp]) -> None:
        self.threads = threads
        self.follow_ups = {f.key: f for f in follow_ups}
        self.followed: list[FollowedThread] = []
        """The followed findings not raised again, as this run leaves them."""
        self.kept_by_test = 0
        """The followed findings kept open by their tests on code that changed (not counted
        among those on unchanged code)."""
        self.posted: dict[str, int] = {}
        """`unit/finding` → the thread standing findings are posted in."""
        self.dismissed: set[int] = set()
        """The threads a person dismissed whose findings were left out."""
        self.raised: list[Fingerprint] = []
        """What this run raised."""
        self.reopen: dict[int, PostedThread] = {}
        """The threads of standing findings resolved by someone whose resolving does not count."""
        self.decided: list[Fingerprint] = []
        """The followed findings their tests decide at this head (failing or passing), on the
        earlier run's code: a finding this run raises again is merged into its own."""
        self.unit_files: dict[str, tuple[UnitFile, ...]] = {}
        """The carried units' slices of the diff, for those with findings."""
        self.readings: dict[str, UnitReading] = {}
        """What the carried units with findings read beside their diffs."""

    def thread_of(self, fingerprint: Fingerprint) -> PostedThread | None:
        return next((t for t in self.threads if t.fingerprint.same_finding(fingerprint)), None)

    def stands(self, unit_id: str, result: FindingOutcome, thread: PostedThread | None) -> bool:
        """Whether a finding stands (its thread not dismissed), noting its thread."""
        if thread is not None and thread.dismissed:
            self.dismissed.add(thread.comment_id)
            return False
        if thread is not None:
            self.posted[finding_key(unit_id, result.finding.id)] = thread.comment_id
            withdrawn = result.resolution is Resolution.WITHDRAWN
            if thread.state is ThreadState.DISREGARDED and not withdrawn:
                self.reopen[thread.comment_id] = thread
        return True

    def this_run(self, unit: Outcome, diff: Diff) -> Outcome:
        """This run's unit, less the findings people dismissed and those merged into a
        followed finding its test decides."""
        kept = []
        for result in unit.findings:
            fingerprint = Fingerprint.of(result.finding, diff)
            if any(_raised_again(followed, fingerprint) for followed in self.decided):
                continue  # the followed finding's test decides it, not this debate
            self.raised.append(fingerprint)
            if self.stands(unit.unit_id, result, self.thread_of(fingerprint)):
                kept.append(result)
        return unit.model_copy(update={"findings": kept})

    def carried(
        self, earlier: RunRecord, diff: Diff, scope: RunScope
    ) -> tuple[list[Outcome], list[GoneFinding]]:
        """The earlier run's units carried forward (with what still stands of them), and its
        unresolved findings no longer found. Call after :meth:`this_run` for every unit."""
        carrying = _Carrying(earlier, Diff.parse(earlier.diff, allow_empty=True), diff, scope)
        slices = earlier.unit_slices()
        units: list[Outcome] = []
        gone: list[GoneFinding] = []
        for unit in earlier.review.units:
            if unit.stop is StopReason.FAILED:
                continue
            unit_id = _carried_id(unit, earlier.ref.head_sha)
            kept = []
            for result in unit.findings:
                fate = self.fate(
                    result, finding_key(unit.unit_id, result.finding.id), unit_id, carrying
                )
                if isinstance(fate, GoneFinding):
                    gone.append(fate)
                elif fate is not None:
                    kept.append(fate)
            walkthrough = _carried_walkthrough(unit.walkthrough, scope)
            if kept or walkthrough is not None:
                carried_from = unit.carried_from or earlier.ref.head_sha
                update = {
                    "unit_id": unit_id,
                    "findings": kept,
                    "carried_from": carried_from,
                    "walkthrough": walkthrough,
                }
                units.append(unit.model_copy(update=update))
            # What a later command's arbiter, or the tester hearing a reply, reads of it.
            if kept and unit.unit_id in slices:
                self.unit_files[unit_id] = slices[unit.unit_id]
            if kept and unit.unit_id in earlier.readings:
                self.readings[unit_id] = earlier.readings[unit.unit_id]
        return units, gone

    def fate(
        self, result: FindingOutcome, key: str, unit_id: str, carrying: "_Carrying"
    ) -> FindingOutcome | GoneFinding | None:
        """What becomes of the earlier finding `key`: carried forward in unit `unit_id`, no
        longer found, or left out (raised again, dismissed, fixed)."""
        finding, before, scope = result.finding, carrying.before, carrying.scope
        fingerprint = Fingerprint.of(finding, before)
        # A finding its test kept open on changed code has the earlier run's link to its
        # thread, which its fingerprint on that code no longer finds.
        thread = self.thread_of(fingerprint) or self.linked(carrying.earlier, key)
        where = (finding.path, finding.start_line, finding.end_line)
        reviewed = scope.reviews(finding.path)
        raised = reviewed and any(_raised_again(fingerprint, f) for f in self.raised)
        changed = (
            reviewed and around(carrying.diff, *where) != around(before, *where)
        ) or carrying.moved(result.patch)
        follow = self.follow_ups.get(key)
        if follow is not None and not raised:
            by_test = self.follow(follow, thread)
            if by_test is not None:
                if by_test and self.stands(unit_id, result, thread):
                    self.kept_by_test += changed
                    return result
                return None
        if raised:
            return None  # this run's debate of it stands (on its code as it is now)
        if changed:
            dismissed = thread is not None and thread.dismissed
            open_ = result.resolution is Resolution.OPEN and not dismissed
            return _gone(result, thread) if open_ else None
        return result if self.stands(unit_id, result, thread) else None

    def linked(self, earlier: RunRecord, key: str) -> PostedThread | None:
        """The thread `earlier` posted the finding `key` in, if it still is there."""
        comment_id = earlier.conversation.threads.get(key)
        return next((t for t in self.threads if t.comment_id == comment_id), None)

    def follow(self, follow: FollowUp, thread: PostedThread | None) -> bool | None:
        """Whether a followed finding stands by what its test showed at this head (True:
        it still fails; False: it passes, or a person ended it), or None when the test did
        not run there as a test: the finding is then left to the review's other rules."""
        if thread is None:
            self.followed.append(FollowedThread(follow=follow))
        else:
            passes = follow.retest is Retest.PASSES
            self.followed.append(
                FollowedThread(
                    follow=follow,
                    thread=thread.comment_id,
                    note=thread.note,
                    answer=passes and not thread.fixed and not thread.dismissed,
                    ended=thread.dismissed,
                )
            )
            if thread.dismissed:
                self.dismissed.add(thread.comment_id)
                return False
        if follow.retest is Retest.NOT_RUN:
            return None
        return follow.retest is Retest.FAILS


@dataclass(frozen=True)
class _Carrying:
    """What carrying an earlier run's findings forward compares: the earlier run and its
    diff, this run's diff and what this run reviewed of it."""

    earlier: RunRecord
    before: Diff
    diff: Diff
    scope: RunScope

    def moved(self, patch: Patch | None) -> bool:
        """Whether the lines `patch` replaces are not, in this run's diff, what the earlier
        run's showed at the same place: lines above them added or removed, or they changed.
        Carried with its old line numbers, such a fix would be suggested and committed over
        other lines; it is not re-anchored where its lines went, just as a finding is not."""
        if patch is None:
            return False
        now = current_lines(self.diff, patch)
        return not now or now != current_lines(self.before, patch)


def _carried_walkthrough(
    walkthrough: UnitWalkthrough | None, scope: RunScope
) -> UnitWalkthrough | None:
    """What an earlier unit's walkthrough still says of the files this run does not review
    (their code did not change); None when it says nothing of them."""
    if walkthrough is None:
        return None
    files = [f for f in walkthrough.files if not scope.reviews(f.path)]
    if not files:
        return None
    attention = [a for a in walkthrough.attention if not scope.reviews(a.path)]
    return walkthrough.model_copy(update={"files": files, "attention": attention})


def _gone(result: FindingOutcome, thread: PostedThread | None) -> GoneFinding:
    """An unresolved finding no longer found; its thread, if any, is answered once."""
    if thread is None:
        return GoneFinding(result=result)
    return GoneFinding(result=result, thread=thread.comment_id, answer=not thread.answered)


def _decided(follow_ups: Sequence[FollowUp], earlier: RunRecord) -> list[Fingerprint]:
    """The fingerprints, on `earlier`'s code, of the followed findings whose tests ran at this
    head as tests: what they showed decides them."""
    before = Diff.parse(earlier.diff, allow_empty=True)
    ran = [f for f in follow_ups if f.retest is not Retest.NOT_RUN]
    return [Fingerprint.of(f.result.finding, before) for f in ran]


def _raised_again(earlier: Fingerprint, now: Fingerprint) -> bool:
    """Whether a finding raised now is the earlier one, on the same code or on its code as
    changed since: then it is not gone, it is the finding as it stands."""
    return earlier.path == now.path and same_gist(earlier.gist, now.gist)


def _carried_id(unit: Outcome, head_sha: str) -> str:
    """A carried unit's id, told apart from this run's units: `u2@1a2b3c4`."""
    return unit.unit_id if unit.carried_from else f"{unit.unit_id}@{head_sha[:7]}"
