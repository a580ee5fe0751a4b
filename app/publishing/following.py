"""Which of a pull request's findings a later review follows: those its tests proved.

A finding whose test proved it (reproduced, or proven in new code) and that is still open
keeps its test across pushes: the test is kept on the run's record with the finding (its
`reproduction`, bounded as every reproduction is), and every later review of the pull request
runs it again at its head (:mod:`app.review.following`), with no model asked. The head alone
decides (:meth:`agents.verification.Verification.retested`), and reconciling the review with
the pull request (:mod:`app.publishing.rereview`) binds what it shows:

- it still fails: the finding stays open whatever the review's model says (never "no longer
  found"), and its thread gets one note with the head's failing lines, edited in place on
  later pushes;
- it passes: the finding is fixed and verified, its thread answered so and resolved;
- it did not run there as a test: said on its thread, the finding left to the review and to
  the people, never resolved on that evidence.

A finding a person ended (a writer resolved its thread, or Tiebreak did at a writer's
`/tiebreak resolve <reason>` there, or at a writer's `/tiebreak resolve` of the whole pull
request, which ends every open finding; or a writer marked it 👎) is no longer followed: its
test is not run again, and the summary counts it so.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from agents.diff import Diff
from agents.outcome import FindingOutcome, Resolution, StopReason
from agents.protocol import Reproduction
from agents.review import Review
from app.publishing.fingerprints import Fingerprint
from app.publishing.publication import RunRecord, finding_key
from app.publishing.rereview import PostedThread


@dataclass(frozen=True)
class Followed:
    """An earlier finding whose test a review runs again at its head."""

    key: str
    """The finding in the earlier run, `unit/finding`."""
    result: FindingOutcome
    test: Reproduction


def followed(earlier: Review | None) -> list[Followed]:
    """The findings of `earlier` (the pull request's latest run) a later review follows: open,
    proven by a test that runs in an environment able to run tests and that nobody set aside
    as not testing its claim."""
    if earlier is None:
        return []
    found = []
    for unit in earlier.units:
        if unit.stop is StopReason.FAILED:
            continue
        for result in unit.findings:
            shown, test = result.verification, result.finding.reproduction
            if result.resolution is not Resolution.OPEN or shown is None or test is None:
                continue
            if shown.verdict.proof and shown.environment is None and shown.relevant is not False:
                found.append(Followed(finding_key(unit.unit_id, result.finding.id), result, test))
    return found


def thread_of(
    followed: Followed, earlier: RunRecord, threads: Sequence[PostedThread]
) -> PostedThread | None:
    """The thread `followed` was posted in by `earlier`, the run that follows it: by its
    fingerprint on that run's diff, or by that run's link to it (a finding its test kept open
    on changed code has a fingerprint no thread carries)."""
    fingerprint = Fingerprint.of(
        followed.result.finding, Diff.parse(earlier.diff, allow_empty=True)
    )
    thread = next((t for t in threads if t.fingerprint.same_finding(fingerprint)), None)
    if thread is None:
        linked = earlier.conversation.threads.get(followed.key)
        thread = next((t for t in threads if t.comment_id == linked), None)
    return thread


def ended(
    tests: Sequence[Followed], earlier: RunRecord, threads: Sequence[PostedThread]
) -> set[str]:
    """The keys of the followed findings a person ended (a writer resolved the thread, or
    Tiebreak did at a writer's `/tiebreak resolve`, or a writer marked it 👎): their tests are
    not run again."""
    gone = set()
    for followed in tests:
        thread = thread_of(followed, earlier, threads)
        if thread is not None and thread.dismissed:
            gone.add(followed.key)
    return gone
