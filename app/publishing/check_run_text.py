"""What the check run says of a run that did not publish a review — it failed, a newer commit
superseded it, a person stopped it, it timed out, the config turns Tiebreak off, the day's
tokens are spent — and what a person's `/tiebreak resolve` puts on top of a finished run's
summary, in its check run and its summary comment (:mod:`app.publishing.check_runs` makes
both).
"""

from datetime import datetime

from app.publishing.markdown import code, prose
from app.publishing.markers import marker


def failure(reason: str, *, run_id: str, sha: str, details_url: str | None) -> str:
    link = f"\n\n[What the run did]({details_url})" if details_url else ""
    return (
        f"{marker(run_id)}\n"
        f"Tiebreak could not finish its review of {code(sha[:7])}.\n\n"
        f"**What went wrong**\n{prose(reason or 'no reason was recorded')}\n\n"
        f"To try again, comment `/tiebreak review` on this pull request.{link}"
    )


def superseded(*, run_id: str, sha: str, newer: str | None) -> str:
    commit = f"A newer commit, {code(newer)}," if newer else "A newer commit"
    return (
        f"{marker(run_id)}\n"
        f"{commit} was pushed while Tiebreak was reviewing {code(sha[:7])}, so this review "
        "stopped. The newer commit gets a review of its own."
    )


def stopped(login: str, *, run_id: str, sha: str) -> str:
    return (
        f"{marker(run_id)}\n"
        f"{prose('@' + login)} stopped Tiebreak's review of {code(sha[:7])} with "
        "`/tiebreak stop`. Comment `/tiebreak review` to review it again."
    )


def timed_out(minutes: int, *, run_id: str, sha: str) -> str:
    return (
        f"{marker(run_id)}\n"
        f"Tiebreak's review of {code(sha[:7])} was still not finished {minutes} minutes after "
        "it started, so its worker most likely stopped or was restarted mid-review. Nothing was "
        "posted for it. Comment `/tiebreak review` to review this commit again."
    )


def resolved(login: str, summary: str) -> str:
    """A finished run's summary with a person's acceptance recorded on top of it."""
    return (
        f"**Resolved by {prose('@' + login)}**: the open findings below were accepted as they "
        f"are.\n\n{summary}"
    )


def disabled(*, run_id: str) -> str:
    return (
        f"{marker(run_id)}\n"
        "This repository's `.github/tiebreak.yml` (as of the pull request's base commit) sets "
        "`enabled: false`, so Tiebreak did not review this pull request."
    )


def daily_budget_reached(
    *, spent: int, cap: int, resets_at: datetime, run_id: str, sha: str
) -> str:
    return (
        f"{marker(run_id)}\n"
        f"This installation's reviews have spent {spent:,} of their {cap:,} billed tokens for "
        f"today, so Tiebreak did not review {code(sha[:7])} and called no model. The allowance "
        f"resets at {resets_at:%Y-%m-%d %H:%M} UTC; after that, comment `/tiebreak review` or "
        "push a commit for a review."
    )
