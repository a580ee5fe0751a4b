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
  so does one on a reviewed file whose code, at its lines, did not change;
- an earlier finding on a reviewed file that is raised again (the same claim on the same
  file) is replaced by this run's debate of it, posted anew only if its code changed;
- an earlier finding on a reviewed file that is not raised again and whose code changed is
  no longer found: if it was unresolved, its thread gets a short reply.

All of it is pure: the review job reads the pull request and calls this.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from agents.debate.claims import same_gist
from agents.diff import Diff
from agents.outcome import FindingOutcome, Outcome, Resolution, StopReason
from agents.protocol import UnitWalkthrough
from agents.review import Review
from app.publishing.fingerprints import Fingerprint, around
from app.publishing.publication import GoneFinding, RunRecord, finding_key


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
    """Tiebreak resolved it (having withdrawn its finding there): it counts."""
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


def reconcile(
    debated: Review,
    diff: Diff,
    *,
    scope: RunScope,
    earlier: RunRecord | None,
    threads: Sequence[PostedThread],
) -> Standing:
    """What stands on the pull request whose whole diff (in the config's scope) is `diff`
    after this run `debated` the part of it in `scope`."""
    ledger = _Ledger(threads)
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
        carried=sum(len(u.findings) for u in carried),
        reopen=list(ledger.reopen.values()),
    )


class _Ledger:
    """The pull request's threads, and what a reconciliation made of them so far."""

    def __init__(self, threads: Sequence[PostedThread]) -> None:
        self.threads = threads
        self.posted: dict[str, int] = {}
        """`unit/finding` → the thread standing findings are posted in."""
        self.dismissed: set[int] = set()
        """The threads a person dismissed whose findings were left out."""
        self.raised: list[Fingerprint] = []
        """What this run raised."""
        self.reopen: dict[int, PostedThread] = {}
        """The threads of standing findings resolved by someone whose resolving does not count."""

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
        """This run's unit, less the findings people dismissed."""
        kept = []
        for result in unit.findings:
            fingerprint = Fingerprint.of(result.finding, diff)
            self.raised.append(fingerprint)
            if self.stands(unit.unit_id, result, self.thread_of(fingerprint)):
                kept.append(result)
        return unit.model_copy(update={"findings": kept})

    def carried(
        self, earlier: RunRecord, diff: Diff, scope: RunScope
    ) -> tuple[list[Outcome], list[GoneFinding]]:
        """The earlier run's units carried forward (with what still stands of them), and its
        unresolved findings no longer found. Call after :meth:`this_run` for every unit."""
        before = Diff.parse(earlier.diff, allow_empty=True)
        units: list[Outcome] = []
        gone: list[GoneFinding] = []
        for unit in earlier.review.units:
            if unit.stop is StopReason.FAILED:
                continue
            unit_id = _carried_id(unit, earlier.ref.head_sha)
            kept = []
            for result in unit.findings:
                finding = result.finding
                fingerprint = Fingerprint.of(finding, before)
                thread = self.thread_of(fingerprint)
                where = (finding.path, finding.start_line, finding.end_line)
                if scope.reviews(finding.path):
                    if any(_raised_again(fingerprint, f) for f in self.raised):
                        continue  # this run's debate of it stands (on its code as it is now)
                    if around(diff, *where) != around(before, *where):
                        dismissed = thread is not None and thread.dismissed
                        if result.resolution is Resolution.OPEN and not dismissed:
                            gone.append(_gone(result, thread))
                        continue
                if self.stands(unit_id, result, thread):
                    kept.append(result)
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
        return units, gone


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


def _raised_again(earlier: Fingerprint, now: Fingerprint) -> bool:
    """Whether a finding raised now is the earlier one, on the same code or on its code as
    changed since: then it is not gone, it is the finding as it stands."""
    return earlier.path == now.path and same_gist(earlier.gist, now.gist)


def _carried_id(unit: Outcome, head_sha: str) -> str:
    """A carried unit's id, told apart from this run's units: `u2@1a2b3c4`."""
    return unit.unit_id if unit.carried_from else f"{unit.unit_id}@{head_sha[:7]}"
