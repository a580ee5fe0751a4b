"""An organisation's defaults, `tiebreak.yml` in `OWNER/.github`, under each repository's own
`.github/tiebreak.yml`: read by the review job through the fake GitHub, on a real Redis."""

import pytest

from agents.models.scripted import ScriptedLLM, by_role
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import STUBBORN, run_review
from tests.scenarios.debates import LOG_LINE, accept, answers, concede, evaluations, finding, report
from tests.scenarios.debates import patch as fix
from tests.scenarios.reviews import BASE, INSTALLATION, NUMBER, REPO

OWNER = REPO.split("/")[0]
DEFAULTS_REPO = f"{OWNER}/.github"
NIT = finding(16, "`log` could be named more clearly.", "nit")
AGREED_NIT = {
    "tester": [report(NIT), evaluations(accept("F1"))],
    "coder": [answers(concede("F1", fix(16, LOG_LINE)))],
}
HIDDEN = "1 finding below the config's `min_severity` (major) not shown"


@pytest.fixture
def org(github: FakeGitHub) -> FakeGitHub:
    """The fake GitHub with the App installed on the organisation's `.github` too."""
    github.add_installation(INSTALLATION, repos=[REPO, DEFAULTS_REPO])
    return github


def summary(github: FakeGitHub) -> str:
    (check,) = github.check_runs(REPO)
    return str(check.output["summary"])


async def test_a_repository_without_its_own_config_gets_the_organisations_defaults(
    org: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    org.set_file(DEFAULTS_REPO, "main", "tiebreak.yml", "min_severity: major\n")

    result, _ = await run_review(org, key, redis_url, ScriptedLLM(by_role(**AGREED_NIT)))

    assert result == "success"
    assert org.reviews(REPO, NUMBER) == []
    assert HIDDEN in summary(org)


async def test_a_repositorys_own_config_overrides_the_defaults_key_by_key(
    org: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    defaults = "label: org-wide\ndebate:\n  arbitration: false\n  max_rounds: 3\n"
    org.set_file(DEFAULTS_REPO, "main", "tiebreak.yml", defaults)
    # Its own `debate` mapping is merged into the defaults', not put in its place.
    org.set_file(REPO, BASE, ".github/tiebreak.yml", "label: ours\ndebate:\n  max_rounds: 4\n")

    await run_review(org, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))

    # Without the defaults' `arbitration: false` the arbiter would settle the findings.
    assert org.issue_labels(REPO, NUMBER) == ["ours"]


async def test_the_defaults_are_read_at_the_head_of_the_default_branch(
    org: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    org.add_repo(DEFAULTS_REPO, default_branch="trunk")
    org.set_file(DEFAULTS_REPO, "trunk", "tiebreak.yml", "min_severity: major\n")
    org.set_file(DEFAULTS_REPO, "elsewhere", "tiebreak.yml", "min_severity: nit\n")

    await run_review(org, key, redis_url, ScriptedLLM(by_role(**AGREED_NIT)))

    assert HIDDEN in summary(org)


async def test_defaults_the_app_cannot_see_are_not_read_and_not_mentioned(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    # Installed on the repository alone: GitHub answers 404 for OWNER/.github.
    github.set_file(DEFAULTS_REPO, "main", "tiebreak.yml", "min_severity: major\n")

    result, _ = await run_review(github, key, redis_url, ScriptedLLM(by_role(**AGREED_NIT)))

    assert result == "neutral"
    assert len(github.reviews(REPO, NUMBER)) == 1
    assert ".github" not in summary(github).replace(".github/tiebreak.yml", "")


async def test_broken_defaults_are_left_out_and_said_so_and_the_repositorys_own_apply(
    org: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    org.set_file(DEFAULTS_REPO, "main", "tiebreak.yml", "label: org-wide\nmin_severity: high\n")
    org.set_file(REPO, BASE, ".github/tiebreak.yml", "label: ours\ndebate:\n  arbitration: false\n")

    await run_review(org, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))

    assert org.issue_labels(REPO, NUMBER) == ["ours"]
    assert (
        f"**{OWNER}/.github:tiebreak.yml was ignored** (the organisation's defaults left out):\n"
        "- line 2: min_severity must be one of 'blocker', 'major', 'minor' or 'nit', not 'high'"
    ) in summary(org)
    (check,) = org.check_runs(REPO)
    # An annotation can only sit on a file of the repository checked.
    assert not [a for a in check.annotations if a["path"] == ".github/tiebreak.yml"]
