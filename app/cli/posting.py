"""`tiebreak review --post`: a review posted on the pull request as the token's person.

Its comments and committable suggestions are the App's (:func:`app.publishing.plan.plan`,
under the repository's config: `min_severity`, `max_inline_comments`), and its body is what
the App's summary comment would say, since a person's review is the only thing posted: no
summary comment, check run or label. It is always a comment, never a request for changes or
an approval in the person's name (GitHub refuses either on one's own pull request). When
GitHub will not place a comment (422), every finding goes in the body instead, as the App
falls back.
"""

import secrets

from agents.diff import Diff
from agents.protocol import Severity
from agents.review import Review
from app.bodies import ReviewDraft, ReviewEvent
from app.cli.pull_address import PullAddress
from app.cli.remote import RemotePull
from app.github.errors import GitHubError
from app.github.models import PostedReview
from app.github.personal import PersonalClient
from app.publishing.markers import SUMMARY_MARKER
from app.publishing.plan import plan
from app.publishing.publication import Publication, RunInfo

UNPROCESSABLE = 422


async def post_review(
    github: PersonalClient, address: PullAddress, remote: RemotePull, review: Review
) -> tuple[PostedReview, int]:
    """Post `review` of the pull request `remote` on it; what GitHub made of it, and how many
    inline comments it has."""
    config, pull = remote.config, remote.pull
    shown = review.at_least(Severity(config.min_severity))
    run = RunInfo.of(
        config,
        run_id=f"cli-{secrets.token_hex(8)}",
        head_sha=pull.head_sha,
        pull_url=pull.html_url or None,
    )
    draft = _draft(shown, remote.diff, run)
    try:
        return await github.post_review(address.key, draft), len(draft.comments)
    except GitHubError as exc:
        if exc.status != UNPROCESSABLE:
            raise
    inline_off = run.model_copy(update={"max_inline_comments": 0})
    return await github.post_review(address.key, _draft(shown, remote.diff, inline_off)), 0


def _draft(review: Review, diff: Diff, run: RunInfo) -> ReviewDraft:
    publication: Publication = plan(review, diff, run=run)
    inline = publication.review
    return ReviewDraft(
        commit_id=run.head_sha,
        body=publication.summary.removeprefix(SUMMARY_MARKER + "\n"),
        event=ReviewEvent.COMMENT,
        comments=inline.comments if inline else [],
    )
