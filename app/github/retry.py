"""How Tiebreak's GitHub client retries: githubkit's policy, with a cap on the waits and two
exceptions, creating a review and creating a check run, which only the caller can retry
safely. The same hook counts every failed attempt."""

import re
from datetime import timedelta

import httpx
from githubkit.exception import GitHubException, RequestError, RequestFailed
from githubkit.retry import (
    RetryChainDecision,
    RetryDecisionFunc,
    RetryOption,
    RetryRateLimit,
    RetryServerError,
)

from app.telemetry.metrics import GITHUB_API_ERRORS, Metrics

MAX_RETRY_WAIT = timedelta(seconds=60)
"""A longer wait (a rate-limit reset an hour away) is not waited for: the call fails."""

_CREATES_ONCE = re.compile(r"/pulls/\d+/reviews$|/check-runs$")
"""The paths of the creations a 5xx answer does not retry: a review, a check run."""


class CappedRetry:
    """githubkit's retries for rate limits and 5xx, minus waits longer than a cap.

    A 5xx answer to creating a review or a check run is not retried here: GitHub may have
    made it anyway, and only the caller can check (by the run's marker, or the check run's
    `external_id`) before making another.
    `backoff` scales the waits between retries of a server error (tests shorten them).
    """

    def __init__(self, max_wait: timedelta = MAX_RETRY_WAIT, *, backoff: float = 1.0) -> None:
        self.max_wait = max_wait
        self.backoff = backoff
        self._chain = RetryChainDecision(RetryRateLimit(max_retry=2), RetryServerError(3))

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if _creates_once(exc) and _status(exc) >= 500:
            return RetryOption(False)
        option = self._chain(exc, retry_count)
        if option.do_retry and option.retry_after and option.retry_after > self.max_wait:
            return RetryOption(False)
        if option.do_retry and option.retry_after and _status(exc) >= 500:
            return RetryOption(True, option.retry_after * self.backoff)
        return option


def _creates_once(exc: GitHubException) -> bool:
    request = getattr(exc, "request", None)
    return (
        request is not None
        and request.method == "POST"
        and _CREATES_ONCE.search(request.url.path) is not None
    )


def _status(exc: GitHubException) -> int:
    return exc.response.status_code if isinstance(exc, RequestFailed) else 0


class CountedFailures:
    """Counts each failed attempt at a GitHub call, then lets `decide` (None: never retry)
    say whether to try again.

    githubkit hands every failure of a request to its retry decision — an error status, a
    timeout, a failed connection — whether or not the call is retried: the one place that
    sees them all. An installation's token is asked for by the App's own client
    (:mod:`app.github.tokens`), which counts (and retries) that request's failures; the calls
    that waited for it fail with it, and are not counted again.
    """

    def __init__(self, metrics: Metrics, decide: RetryDecisionFunc | None) -> None:
        self.metrics = metrics
        self.decide = decide

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if not _for_a_token(exc):
            self.metrics.inc(GITHUB_API_ERRORS, status=failure_status(exc))
        return RetryOption(False) if self.decide is None else self.decide(exc, retry_count)


def _for_a_token(exc: GitHubException) -> bool:
    """Whether `exc` is a call's failure to get its installation's token: what the token's
    own request raised (a refusal, a failed connection), raised from the call's auth flow
    and wrapped by its send."""
    return isinstance(exc, RequestError) and isinstance(exc.exc, GitHubException)


def failure_status(exc: BaseException) -> str:
    """The status GitHub answered; `transport` for a timeout or a failed connection."""
    if isinstance(exc, RequestFailed):
        return str(exc.response.status_code)
    if isinstance(exc, RequestError) and isinstance(exc.exc, httpx.TransportError):
        return "transport"
    return "other"
