"""GitHub refusing the installation's access token, end to end: a real worker's review against
the fake GitHub, whose `POST /app/installations/{id}/access_tokens` answers 404 (the
installation removed), 403 (suspended) or 401 (the App's key refused). The check run, when
Tiebreak can still post it, and the job's result say so, not that GitHub could not be reached:
the token is asked for inside the call's auth flow, and githubkit wraps GitHub's refusal there
as a failure to send."""

import pytest

from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
from tests.kits.review import agreed, run_review
from tests.scenarios.reviews import REF, REPO

TOKENS = r"/app/installations/\d+/access_tokens"
DOCS = "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"
UNREACHABLE = "could not be reached"

REFUSALS = [
    (404, "Not Found", "the App is no longer installed"),
    (403, "This installation has been suspended", "the App's installation is suspended"),
    (401, "A JSON web token could not be decoded", "the App's private key"),
]


@pytest.mark.parametrize(
    ("status", "message", "said"), REFUSALS, ids=["removed", "suspended", "wrong key"]
)
async def test_a_refused_token_is_said_on_the_check_run_and_in_the_job_s_result(
    github: FakeGitHub, key: AppKey, redis_url: str, status: int, message: str, said: str
) -> None:
    """The review's first call is refused its token; the check run, asked for after, is not."""
    github.fail_next("POST", TOKENS, status, body={"message": message, "documentation_url": DOCS})

    result, _ = await run_review(github, key, redis_url, agreed())

    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "failure")
    summary = check.output["summary"]
    assert said in summary
    assert UNREACHABLE not in summary
    assert result is not None
    assert said in result
    assert str(status) in result
    assert message in result


async def test_a_removed_installation_is_named_in_the_job_s_result(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    """Installation 404 is unknown to GitHub: no check run can be posted, the result says why."""
    gone = REF.model_copy(update={"installation_id": 404})

    result, _ = await run_review(github, key, redis_url, agreed(), gone)

    assert github.check_runs(REPO) == []
    assert result is not None
    assert "the App is no longer installed" in result
    assert UNREACHABLE not in result


async def test_a_wrong_private_key_is_named_in_the_job_s_result(
    github: FakeGitHub, redis_url: str
) -> None:
    result, _ = await run_review(github, new_app_key(), redis_url, agreed())

    assert github.check_runs(REPO) == []
    assert result is not None
    assert "the App's private key" in result
    assert UNREACHABLE not in result
