"""Re-reviews: a finding the pull request already has a thread for is not posted again, and
one a writer dismissed there is left out, wherever its thread sits.

Each case posts a first run's review, reads its threads back as GitHub gives them (each
comment's file and body, nothing else) and reconciles and publishes the next run.
(Through a real worker and the fake GitHub: `tests/app/jobs/test_rereview.py`.)
"""

import pytest

from agents.outcome import FindingOutcome
from agents.protocol import Patch
from agents.review import Review
from app.events import PullRequestRef
from app.publishing.fingerprints import Fingerprint
from app.publishing.plan import plan
from app.publishing.publication import Conversation, Publication, RunRecord
from app.publishing.rereview import PostedThread, RunScope, Standing, ThreadState, reconcile
from tests.kits.plan import BIG, CORPUS, DIFF, HEAD, NEW, NOTES, RUN, draft, result, unit

CLAIM = "The counter overflows when the retry budget is exhausted."
PULL_URL = "https://github.com/o/r/pull/7"
FIRST = RUN.model_copy(update={"pull_url": PULL_URL})
NEXT = FIRST.model_copy(update={"run_id": "run-43"})
REF = PullRequestRef(installation_id=1, owner="o", repo="r", number=7, head_sha=HEAD)

ON_ITS_FILE = Patch(path=BIG, start_line=5, end_line=5, replacement="line 5 fixed\n")
ON_ANOTHER_FILE = Patch(path=NEW, start_line=11, end_line=11, replacement="    return 3\n")
"""A fix the coder suggests on another file than the finding's (its caller, say)."""
FIXES = pytest.mark.parametrize(
    "fix", [ON_ITS_FILE, ON_ANOTHER_FILE], ids=["fix on its file", "fix on another file"]
)


def fixed(fix: Patch) -> FindingOutcome:
    """A finding on line 5 of the big file, fixed by `fix`."""
    return result("F1", BIG, 5, fix=fix, claim=CLAIM)


def threads_of(publication: Publication) -> list[PostedThread]:
    """The threads a run's review starts, read back from the comments GitHub then shows."""
    threads = []
    for number, comment in enumerate(draft(publication).comments, 101):
        fingerprint = Fingerprint.from_comment(comment.path, comment.body)
        assert fingerprint is not None
        threads.append(PostedThread(comment_id=number, fingerprint=fingerprint))
    return threads


def next_run(
    first: Review, threads: list[PostedThread], *, again: bool
) -> tuple[Standing, Publication]:
    """The run after `first`, its threads as `threads` say: one that debates the big file
    again and raises its finding again (`again`), or one after a push that changed only the
    notes, carrying the big file's findings forward."""
    earlier = RunRecord(
        run_id=RUN.run_id,
        ref=REF,
        check_run_id=1,
        conclusion="neutral",
        review=first,
        diff=CORPUS,
    )
    if again:
        debated, scope = first, RunScope.full("the config changed")
    else:
        debated, scope = Review(units=[]), RunScope.changed_since(HEAD, frozenset({NOTES}))
    standing = reconcile(debated, DIFF, scope=scope, earlier=earlier, threads=threads)
    conversation = Conversation(
        threads=standing.threads, dismissed=standing.dismissed, carried=standing.carried
    )
    return standing, plan(standing.review, DIFF, run=NEXT, conversation=conversation)


@FIXES
@pytest.mark.parametrize("again", [False, True], ids=["carried forward", "raised again"])
def test_a_finding_with_a_thread_is_not_posted_again_wherever_its_fix_was_suggested(
    fix: Patch, again: bool
) -> None:
    first = Review(units=[unit(fixed(fix))])
    posted = plan(first, DIFF, run=FIRST)
    (comment,) = draft(posted).comments
    assert (comment.path, comment.line) == (fix.path, fix.start_line)

    _, later = next_run(first, threads_of(posted), again=again)

    assert later.review is None  # no comment posted twice
    assert later.check.title == "1 fix suggested"
    assert f"| [thread]({PULL_URL}#discussion_r101) |" in later.summary


@FIXES
@pytest.mark.parametrize(
    "dismissal",
    [{"state": ThreadState.BY_WRITER}, {"refused_by": "octocat"}],
    ids=["a writer resolved it", "a writer marked it 👎"],
)
@pytest.mark.parametrize("again", [False, True], ids=["carried forward", "raised again"])
def test_a_finding_a_writer_dismissed_is_left_out_wherever_its_fix_was_suggested(
    fix: Patch, dismissal: dict[str, object], again: bool
) -> None:
    first = Review(units=[unit(fixed(fix))])
    (thread,) = threads_of(plan(first, DIFF, run=FIRST))

    standing, later = next_run(first, [thread.model_copy(update=dismissal)], again=again)

    assert standing.dismissed == 1
    assert later.review is None
    assert later.check.title == "No findings"


def test_a_thread_on_another_file_is_not_another_finding_s_there() -> None:
    """The fix's file has a finding of its own with the same words: the thread of the fix
    suggested there for the big file's finding is not its thread."""
    own = result("F1", NEW, 11, claim=CLAIM)
    first = Review(units=[unit(fixed(ON_ANOTHER_FILE))])
    (thread,) = threads_of(plan(first, DIFF, run=FIRST))

    standing = reconcile(
        Review(units=[unit(own, unit_id="u2")]),
        DIFF,
        scope=RunScope.full("the config changed"),
        earlier=None,
        threads=[thread],
    )

    assert standing.threads == {}
    assert [f.finding.path for f in standing.review.findings] == [NEW]


def test_a_fix_on_another_file_is_not_posted_again_on_any_later_push() -> None:
    first = Review(units=[unit(fixed(ON_ANOTHER_FILE))])
    threads = threads_of(plan(first, DIFF, run=FIRST))
    standing, _ = next_run(first, threads, again=False)
    second = RunRecord(
        run_id=NEXT.run_id,
        ref=REF,
        check_run_id=2,
        conclusion="neutral",
        review=standing.review,
        diff=CORPUS,
    )

    third = reconcile(
        Review(units=[]),
        DIFF,
        scope=RunScope.changed_since(HEAD, frozenset({NOTES})),
        earlier=second,
        threads=threads,
    )
    run = NEXT.model_copy(update={"run_id": "run-44"})
    last = plan(third.review, DIFF, run=run, conversation=Conversation(threads=third.threads))

    assert list(third.threads.values()) == [101]
    assert last.review is None
