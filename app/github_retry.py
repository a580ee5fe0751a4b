"""How Tiebreak's GitHub client retries: githubkit's policy, with a cap on the waits and one
exception, creating a review, which only the caller can retry safely."""

import re
from datetime import timedelta

from githubkit.exception import GitHubException, RequestFailed
from githubkit.retry import RetryChainDecision, RetryOption, RetryRateLimit, RetryServerError

MAX_RETRY_WAIT = timedelta(seconds=60)
"""A longer wait (a rate-limit reset an hour away) is not waited for: the call fails."""

_REVIEWS_PATH = re.compile(r"/pulls/\d+/reviews$")


class CappedRetry:
    """githubkit's retries for rate limits and 5xx, minus waits longer than a cap.

    A 5xx answer to creating a review is not retried here: GitHub may have posted it anyway,
    and only the caller can check (by the run's marker) before posting again.
    `backoff` scales the waits between retries of a server error (tests shorten them).
    """

    def __init__(self, max_wait: timedelta = MAX_RETRY_WAIT, *, backoff: float = 1.0) -> None:
        self.max_wait = max_wait
        self.backoff = backoff
        self._chain = RetryChainDecision(RetryRateLimit(max_retry=2), RetryServerError(3))

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if _creates_a_review(exc) and _status(exc) >= 500:
            return RetryOption(False)
        option = self._chain(exc, retry_count)
        if option.do_retry and option.retry_after and option.retry_after > self.max_wait:
            return RetryOption(False)
        if option.do_retry and option.retry_after and _status(exc) >= 500:
            return RetryOption(True, option.retry_after * self.backoff)
        return option


def _creates_a_review(exc: GitHubException) -> bool:
    request = getattr(exc, "request", None)
    return (
        request is not None
        and request.method == "POST"
        and _REVIEWS_PATH.search(request.url.path) is not None
    )


def _status(exc: GitHubException) -> int:
    return exc.response.status_code if isinstance(exc, RequestFailed) else 0
