"""Fault injection: flaky model, flaky GitHub, rate limits — the review lands exactly once.

The real SDKs on both sides (the anthropic client against the fake Messages API, githubkit
against the fake GitHub), with their production retry policies and shortened waits. A quarter
of the model's calls are answered 529 or 429, a fifth of GitHub writes 502, one write hits a
secondary rate limit, and one review is posted although GitHub answers 502.
"""

import re
from typing import Any

from agents.models.claude import ClaudeLLM
from agents.models.llm import Usage
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.messages_api import Body, Error, FakeMessagesAPI, QueuedResponder, Reply
from tests.kits.review import run_review
from tests.scenarios.debates import AGREED
from tests.scenarios.reviews import NUMBER, REPO

QUICK = 0.01
WRITES = ("POST", "PATCH", "PUT", "DELETE")


class Flaky:
    """Answers one call in four (the second of each four) with an overload (529) or a rate
    limit (429), alternately."""

    def __init__(self, responder: QueuedResponder) -> None:
        self.responder = responder
        self.calls = 0
        self.refused = 0

    def __call__(self, body: Body) -> Reply:
        self.calls += 1
        if self.calls % 4 != 2:
            return self.responder(body)
        self.refused += 1
        wait = {"retry-after-ms": "10"}
        if self.refused % 2:
            return Error(529, "overloaded_error", "Overloaded", wait)
        return Error(429, "rate_limit_error", "Rate limited", wait)


async def test_a_review_through_flaky_apis_is_posted_exactly_once(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.fail_every(5, WRITES, r"/repos/.*", 502)
    # A secondary rate limit, which GitHub answers with a wait.
    github.fail_next("PATCH", r"/repos/.*/check-runs/\d+", 403, headers={"retry-after": "1"})
    github.fail_next("POST", r"/repos/.*/pulls/\d+/reviews", 502, processed=True)
    flaky = Flaky(QueuedResponder(**AGREED))
    with FakeMessagesAPI(flaky) as api:
        llm = ClaudeLLM.connect(api_key=api.api_key, base_url=api.base_url)
        try:
            result, _ = await run_review(github, key, redis_url, llm, retry_backoff=QUICK)
        finally:
            await llm.aclose()

    assert result == "neutral"
    assert flaky.refused >= 1
    (review,) = github.reviews(REPO, NUMBER)
    assert len(review.comments) == 1
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")
    # Every answered call is accounted for, and nothing else: refused calls cost nothing.
    billed = sum(_billed(u.as_json()) for u in api.usages)
    spent = re.search(r"\*\*Spend\*\*: ([\d,]+) billed tokens", check.output["summary"])
    assert spent is not None
    assert int(spent[1].replace(",", "")) == billed
    failed = [r for r in github.requests if r.status >= 500]
    assert len(failed) >= 2


def _billed(usage: dict[str, Any]) -> int:
    """What Tiebreak bills for one answered call, from the usage the API reported."""
    fields = ("input_tokens", "output_tokens")
    caching = ("cache_creation_input_tokens", "cache_read_input_tokens")
    return Usage(**{k: usage[k] for k in fields}, **{k: usage.get(k) or 0 for k in caching}).billed
