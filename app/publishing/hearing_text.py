"""What Tiebreak says when a person replies on one of its finding threads, and which finding
the thread is about: pure, no I/O.

Every reply here is short and made once per person's reply. The tester's reason is model text
and goes through :func:`app.publishing.markdown.prose`; nothing of the person's own reply is
quoted back.
"""

from collections.abc import Mapping

from agents.diff import Diff
from agents.review import Review
from app.publishing import markdown as md
from app.publishing.fingerprints import Fingerprint
from app.publishing.markers import WITHDRAWN_MARKER
from app.publishing.publication import finding_key

REASON_LIMIT = 1_000
"""Characters of the tester's reason quoted in a reply."""


def finding_of_thread(
    review: Review,
    diff: Diff,
    fingerprint: Fingerprint,
    thread: int,
    threads: Mapping[str, int],
) -> tuple[str, str] | None:
    """The open finding (`unit id`, `finding id`) of `review` whose thread starts with the
    comment `thread`, which carries `fingerprint`: the one the run linked to that thread, or
    else the one with the same fingerprint on `diff`. None if no open finding is about it."""
    for unit in review.units:
        for result in unit.unresolved:
            if threads.get(finding_key(unit.unit_id, result.finding.id)) == thread:
                return unit.unit_id, result.finding.id
    for unit in review.units:
        for result in unit.unresolved:
            if fingerprint.same_finding(Fingerprint.of(result.finding, diff)):
                return unit.unit_id, result.finding.id
    return None


def withdrawn(finding_id: str, reason: str, taught: str = "") -> str:
    """The reply when the tester accepts the person's argument, with what it `taught`; its
    marker, last, tells a later review that Tiebreak resolved the thread."""
    return (
        f"Withdrawn: the tester accepts your reply, and {finding_id} no longer counts against "
        f"this pull request.\n\n{md.prose(reason, REASON_LIMIT)}{taught}\n\n{WITHDRAWN_MARKER}"
    )


def stands(finding_id: str, reason: str) -> str:
    """The reply when the tester rejects the person's argument."""
    return (
        f"{finding_id} stands: the tester does not accept your reply.\n\n"
        f"{md.prose(reason, REASON_LIMIT)}\n\n"
        "To have the arbiter rule on it, weighing your reply too, comment "
        "`/tiebreak arbitrate` in this thread."
    )


def over_cap(cap: int) -> str:
    """The one note a pull request gets once its replies heard reach the config's cap."""
    return (
        f"This pull request has had the {cap} replies it may have heard "
        "(`conversation.max_replies` in `.github/tiebreak.yml`); later replies are not "
        "weighed. `/tiebreak arbitrate` in a finding's thread still sends it to the arbiter."
    )


def not_weighed(why: str) -> str:
    """The reply when the tester could not be asked."""
    return f"Your reply could not be weighed: {why}. The finding stands as it was."


def superseded(head_sha: str) -> str:
    """The reply when a newer review landed while the tester weighed the person's reply."""
    return (
        f"Tiebreak reviewed {head_sha[:7]} while your reply was weighed: that review weighs "
        "the code as it is now, and this reply changes nothing. If the finding still stands "
        "there, reply again."
    )
