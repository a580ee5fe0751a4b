"""The hidden markers Tiebreak's comments carry, by which it finds its own posts again.

A review's body and a check run's summary start with the run's marker; the pull request's
summary comment starts with the summary marker; a reply on a thread whose finding is gone, one
that withdraws a finding after a person's reply, one on a thread Tiebreak reopened, one saying a
proven finding's test passes and the note on its test's latest run each end with their own; an
inline comment ends with its finding's fingerprint (:mod:`app.publishing.fingerprints`). Only a
marker where Tiebreak puts it counts: model text further down a body could quote one.
"""

import re

RUN_ID = r"[A-Za-z0-9_.:/#@+-]{1,400}"
"""What a run id may be: the review job's id, `review:owner/repo#7@sha`, and its variants."""

SUMMARY_MARKER = "<!-- tiebreak:summary -->"
"""The first line of the pull request's summary comment: how a later run finds it."""

ANSWERED_MARKER = "<!-- tiebreak:gone -->"
"""The last line of Tiebreak's reply on the thread of a finding it no longer finds."""

WITHDRAWN_MARKER = "<!-- tiebreak:withdrawn -->"
"""The last line of Tiebreak's reply withdrawing a finding after a person's reply, before it
resolves the thread: how a later review knows Tiebreak resolved it, GitHub naming no App's bot
user as a thread's resolver."""

REOPENED_MARKER = "<!-- tiebreak:reopened -->"
"""The last line of Tiebreak's reply on a thread it reopened (someone who may not write had
resolved it): said once per thread."""

RESOLVED_MARKER = "<!-- tiebreak:resolved -->"
"""The last line of Tiebreak's answer to a writer's `/tiebreak resolve <reason>` in a finding's
thread, before it resolves the thread: the finding is ended, and a proven one no longer
followed."""

FIXED_MARKER = "<!-- tiebreak:fixed -->"
"""The last line of Tiebreak's reply on a proven finding's thread once its test passes, before
it resolves the thread: said once, and how a later review knows Tiebreak resolved it."""

FOLLOWED_MARKER = "<!-- tiebreak:followed -->"
"""The last line of Tiebreak's one note on a proven finding's thread about its test's latest
run at a later head (still failing, or not run there): edited in place on later pushes."""

_MARKER = re.compile(rf"<!-- tiebreak:run:({RUN_ID}) -->")


def marker(run_id: str) -> str:
    """The first line of the review and the check run that run `run_id` publishes."""
    return f"<!-- tiebreak:run:{run_id} -->"


def run_id_of(body: str) -> str | None:
    """The run a review body or check summary was published by, from its first line.

    Only the first line counts: model text further down could quote a marker.
    """
    match = _MARKER.fullmatch(body.split("\n", 1)[0])
    return match[1] if match else None
