"""What Tiebreak says of the proven findings it follows across pushes, in Markdown.

A followed finding's thread gets one note on its test's latest run while the test still fails
(with the head's failing lines) or could not run there, edited in place on later pushes, and
once the test passes a reply that it is fixed, before the thread is resolved; a writer's
`/tiebreak resolve` of the whole pull request gets a reply that ends its following. The summary
and the check run count them, and the summary lists each (:mod:`app.publishing.following`).
The test's output is untrusted: it only appears inside a code block nothing inside can close.
"""

from collections.abc import Sequence

from agents.verification import Retest
from app.publishing.finding_text import location
from app.publishing.markdown import code, inline, prose
from app.publishing.markers import FIXED_MARKER, FOLLOWED_MARKER, RESOLVED_MARKER
from app.publishing.proof_text import output
from app.publishing.publication import FollowedThread, FollowUp
from app.publishing.text import thread_link


def fixed(follow: FollowUp, *, sha: str) -> str:
    """The reply on a followed finding's thread once its test passes at `sha`."""
    test = code(follow.test)
    return (
        f"Fixed at {code(sha[:7])}: its test passes now. {test}, which proved this finding, "
        f"failed before and passes at this commit, so Tiebreak counts it fixed and verified "
        f"and resolves this thread.\n\n{FIXED_MARKER}"
    )


def resolved(login: str, test: str) -> str:
    """The reply on a followed finding's thread when a writer's `/tiebreak resolve` of the
    whole pull request ends it, before the thread is resolved."""
    return (
        f"Resolved by {prose('@' + login)} with `/tiebreak resolve`: the finding is accepted "
        f"as it is, and {code(test)}, which proved it, no longer runs at later pushes.\n\n"
        f"{RESOLVED_MARKER}"
    )


def note(follow: FollowUp, *, sha: str) -> str:
    """Tiebreak's note on a followed finding's thread: its test's run at `sha`, still
    failing or not run there."""
    test = code(follow.test)
    if follow.retest is Retest.FAILS:
        return (
            f"Still fails at {code(sha[:7])}: {test}, which proved this finding, fails at this "
            "commit, so the finding stays open whatever the review of the push says. The end "
            f"of what it printed:\n\n{output(follow.output)}\n\n"
            f"{FOLLOWED_MARKER}"
        )
    return (
        f"Could not run at {code(sha[:7])}: {test}, which proved this finding, did not run "
        f"there as a test ({inline(follow.reason, 300)}). It shows nothing of the code: the "
        "finding is left to the review and to you, and is not resolved on that run.\n\n"
        f"{FOLLOWED_MARKER}"
    )


WORDS = {
    Retest.FAILS: "still fails",
    Retest.PASSES: "passes: fixed",
    Retest.NOT_RUN: "not run",
}
"""What a followed test's run at a later head showed, in a few words."""
_SAID = {
    Retest.FAILS: "**still fails**",
    Retest.PASSES: "**fixed and verified**: its test passes now",
    Retest.NOT_RUN: "**test not run**",
}


def headline(followed: Sequence[FollowedThread]) -> list[str]:
    """The check run's title's parts for the proven findings followed: those whose tests
    still fail and those fixed and verified, each when there is one."""
    failing, passing = _tally(followed)
    parts = []
    if failing:
        one = failing == 1
        parts.append(f"{failing} proven finding{'' if one else 's'} still fail{'s' if one else ''}")
    if passing:
        parts.append(f"{passing} fixed and verified")
    return parts


def counts(followed: Sequence[FollowedThread], *, sha: str) -> list[str]:
    """The summary's and the check run's count of the proven findings followed at `sha`."""
    if not followed:
        return []
    shown = [f for f in followed if not f.ended]
    failing, passing = _tally(shown)
    unrun, ended = len(shown) - failing - passing, len(followed) - len(shown)
    parts = [
        f"{failing} still failing",
        f"{passing} fixed and verified",
        *([f"{unrun} not run"] if unrun else []),
        *([f"{ended} no longer followed"] if ended else []),
    ]
    return [f"**Proven findings' tests at {code(sha[:7])}**: {' · '.join(parts)}\n\n"]


def _tally(followed: Sequence[FollowedThread]) -> tuple[int, int]:
    """How many of the proven findings `followed` that no person ended still fail, and how
    many pass: fixed and verified."""
    shown = [f.follow.retest for f in followed if not f.ended]
    return shown.count(Retest.FAILS), shown.count(Retest.PASSES)


def section(followed: Sequence[FollowedThread], pull_url: str | None, *, sha: str) -> list[str]:
    """The summary's list of the proven findings whose tests ran again at `sha`."""
    if not followed:
        return []
    lines = []
    for each in followed:
        result, follow = each.follow.result, each.follow
        finding = result.finding
        where = code(location(finding.path, finding.start_line, finding.end_line))
        if each.ended:
            said = "no longer followed: a person ended it"
        elif follow.retest is Retest.NOT_RUN:
            said = f"{_SAID[follow.retest]} ({inline(follow.reason, 200)}): left to the review"
        else:
            said = _SAID[follow.retest]
        link = f" · {thread_link(each.thread, pull_url)}" if each.thread is not None else ""
        lines.append(
            f"- {where} ({finding.severity}): {inline(finding.claim, 300)} — "
            f"{code(follow.test)} {said}{link}\n"
        )
    return [
        f"#### Proven findings followed\n\nEach test that proved an open finding ran again at "
        f"{code(sha[:7])}: the finding stays open while it fails, and is fixed once it "
        "passes.\n\n",
        *lines,
        "\n",
    ]
