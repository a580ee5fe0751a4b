"""Each option of `.github/tiebreak.yml`, shown changing what a review does on the pull request.

A real worker runs the review job on a real Redis against the fake GitHub, with the model
scripted (or, for the model choice, the real SDK against the fake Messages API). The config
is always put on the base commit: that is the only place it is read from.
"""

from typing import Any

import pytest

from agents.models.claude import ClaudeLLM
from agents.models.llm import Role
from agents.models.scripted import ScriptedLLM, by_role
from app.settings import Settings
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.messages_api import FakeMessagesAPI, QueuedResponder
from tests.kits.review import STUBBORN, agreed, run_review
from tests.kits.review import summary as summary_comment
from tests.scenarios.debates import (
    AGREED,
    LOG_LINE,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    accept,
    answers,
    concede,
    evaluations,
    finding,
    git_diff,
    patch,
    report,
)
from tests.scenarios.reviews import BASE, DIFF, HEAD, NUMBER, REPO

CONFIG = ".github/tiebreak.yml"
NOT_AGREEING = "debate:\n  arbitration: false\n"
LOCK = "poetry.lock"


def configure(github: FakeGitHub, text: str) -> None:
    github.set_file(REPO, BASE, CONFIG, text)


def open_pull(github: FakeGitHub, **fields: Any) -> None:
    """Reopen the fixture's pull request with other fields (a draft, another author)."""
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, **{"diff": DIFF, **fields})


def silent(github: FakeGitHub, llm: ScriptedLLM) -> bool:
    """Whether Tiebreak left no trace at all: no check run, no review, no model call."""
    return not github.check_runs(REPO) and not github.reviews(REPO, NUMBER) and not llm.requests


def summary(github: FakeGitHub) -> str:
    (check,) = github.check_runs(REPO)
    return str(check.output["summary"])


# -- whether a review happens -----------------------------------------------------------------


async def test_an_automatic_review_of_a_disabled_repository_leaves_no_trace(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    configure(github, "enabled: false\n")
    llm = ScriptedLLM(by_role())

    result, _ = await run_review(github, key, redis_url, llm, trigger="opened")

    assert result == "not reviewed: Tiebreak is turned off for this repository"
    assert silent(github, llm)


@pytest.mark.parametrize(
    ("triggers", "trigger", "reviewed"),
    [
        ("[opened]", "opened", True),
        ("[opened]", "synchronize", False),
        ("[opened, synchronize]", "synchronize", True),
        ("[]", "opened", False),
        ("[]", None, True),  # asked for with /tiebreak review
    ],
)
async def test_triggers_choose_the_events_that_start_a_review(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    triggers: str,
    trigger: str | None,
    reviewed: bool,
) -> None:
    configure(github, f"triggers: {triggers}\n")
    llm = agreed()

    result, _ = await run_review(github, key, redis_url, llm, trigger=trigger)

    assert (result == "neutral") is reviewed
    assert len(github.reviews(REPO, NUMBER)) == int(reviewed)
    if not reviewed:
        assert result == f"not reviewed: the config does not review on {trigger!r}"
        assert silent(github, llm)


@pytest.mark.parametrize(
    ("config", "trigger", "reviewed"),
    [
        ("", "opened", False),
        ("review_drafts: true\n", "opened", True),
        ("", None, True),  # a person asked
    ],
)
async def test_drafts_are_reviewed_only_when_the_config_says_so(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    config: str,
    trigger: str | None,
    reviewed: bool,
) -> None:
    open_pull(github, draft=True)
    configure(github, config)
    llm = agreed()

    result, _ = await run_review(github, key, redis_url, llm, trigger=trigger)

    assert len(github.reviews(REPO, NUMBER)) == int(reviewed)
    if not reviewed:
        assert result == "not reviewed: drafts are reviewed once they are ready"
        assert silent(github, llm)


@pytest.mark.parametrize(
    ("author", "config", "reviewed"),
    [
        ("dependabot[bot]", "", False),  # ignored by default
        ("renovate[bot]", "", False),
        ("dependabot[bot]", "ignore_authors: []\n", True),
        ("octocat", "", True),
        ("octocat", "ignore_authors: [OctoCat]\n", False),  # logins ignore case
    ],
)
async def test_pull_requests_by_ignored_authors_get_no_automatic_review(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    author: str,
    config: str,
    reviewed: bool,
) -> None:
    open_pull(github, author=author, author_type="Bot" if author.endswith("[bot]") else "User")
    configure(github, config)
    llm = agreed()

    result, _ = await run_review(github, key, redis_url, llm, trigger="opened")

    assert len(github.reviews(REPO, NUMBER)) == int(reviewed)
    if not reviewed:
        assert result == f"not reviewed: the config ignores pull requests by {author}"
        assert silent(github, llm)


async def test_a_person_can_ask_for_a_review_of_an_ignored_authors_pull_request(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    open_pull(github, author="dependabot[bot]", author_type="Bot")

    result, _ = await run_review(github, key, redis_url, agreed(), trigger=None)

    assert result == "neutral"
    assert len(github.reviews(REPO, NUMBER)) == 1


IGNORING = """\
ignore:
  base_branches: [release/**]
  head_branches: [dependabot/**]
  title_patterns: ['[WIP]*']
  labels: [no-review]
"""


@pytest.mark.parametrize(
    ("pull", "label", "why"),
    [
        ({"base_ref": "release/2.0"}, None, "the config ignores pull requests into release/2.0"),
        (
            {"head_ref": "dependabot/pip/x"},
            None,
            "the config ignores pull requests from dependabot/pip/x",
        ),
        ({"title": "[wip] payments"}, None, "the config ignores titles like '[WIP]*'"),
        ({}, "No-Review", "the config ignores pull requests labelled 'No-Review'"),
        ({"title": "WIP payments", "head_ref": "dependabot-like"}, "needs-review", None),
    ],
    ids=["base-branch", "head-branch", "title", "label", "none-matching"],
)
async def test_ignore_filters_decline_the_automatic_review_of_a_pull_request_they_match(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    pull: dict[str, str],
    label: str | None,
    why: str | None,
) -> None:
    open_pull(github, **pull)
    if label is not None:
        github.label_pull(REPO, NUMBER, label)
    configure(github, IGNORING)
    llm = agreed()

    result, _ = await run_review(github, key, redis_url, llm, trigger="opened")

    if why is None:
        assert result == "neutral"
        assert len(github.reviews(REPO, NUMBER)) == 1
    else:
        assert result == f"not reviewed: {why}"
        assert silent(github, llm)


async def test_a_person_can_ask_for_a_review_of_a_pull_request_the_filters_ignore(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    open_pull(github, title="[WIP] payments")
    configure(github, IGNORING)

    result, _ = await run_review(github, key, redis_url, agreed(), trigger=None)

    assert result == "neutral"
    assert len(github.reviews(REPO, NUMBER)) == 1


# -- what is reviewed -------------------------------------------------------------------------


def with_lock_file(github: FakeGitHub) -> None:
    diff = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER), LOCK: ("a = 1\n", "a = 2\n")})
    open_pull(github, diff=diff)


def reviewed_paths(llm: ScriptedLLM) -> set[str]:
    """The paths whose diff the tester was shown."""
    shown = "".join(b.text for r in llm.calls(Role.TESTER) for b in r.blocks)
    return {path for path in (PAYMENTS, LOCK) if f"+++ b/{path}" in shown}


async def test_every_changed_file_is_reviewed_by_default(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    with_lock_file(github)
    llm = agreed()

    await run_review(github, key, redis_url, llm)

    assert reviewed_paths(llm) == {PAYMENTS, LOCK}
    assert "outside the config's `paths`" not in summary(github)


@pytest.mark.parametrize(
    "config",
    [
        'paths:\n  exclude: ["*.lock"]\n',
        'paths:\n  include: ["app/**"]\n',
        'paths:\n  include: ["**"]\n  exclude: ["poetry.lock"]\n',
    ],
)
async def test_paths_leave_files_out_of_the_review_and_the_summary_says_so(
    github: FakeGitHub, key: AppKey, redis_url: str, config: str
) -> None:
    with_lock_file(github)
    configure(github, config)
    llm = agreed()

    result, _ = await run_review(github, key, redis_url, llm)

    assert result == "neutral"
    assert reviewed_paths(llm) == {PAYMENTS}
    assert "1 changed file is outside the config's `paths` and was not reviewed" in summary(github)


async def test_a_pull_request_with_nothing_in_scope_calls_no_model(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    configure(github, 'paths:\n  include: ["docs/**"]\n')
    llm = ScriptedLLM(by_role())

    result, _ = await run_review(github, key, redis_url, llm)

    assert result == "success"
    assert llm.requests == []
    assert "outside the config's `paths`" in summary(github)


async def test_protected_paths_are_never_patched(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    configure(github, 'debate:\n  protected_paths: ["app/**"]\n  arbitration: false\n')
    llm = ScriptedLLM(by_role(**STUBBORN_AFTER_A_REFUSED_PATCH))

    await run_review(github, key, redis_url, llm)

    # The coder's patch to app/payments.py was refused, and it was told why.
    (_, retry, *_) = llm.calls(Role.CODER)
    assert "app/payments.py is a protected path" in "".join(b.text for b in retry.blocks)
    (review,) = github.reviews(REPO, NUMBER)
    assert all("```suggestion" not in c.body for c in review.comments)


STUBBORN_AFTER_A_REFUSED_PATCH: dict[str, list[Any]] = {
    "tester": STUBBORN["tester"],
    "coder": [answers(concede("F1", patch(16, LOG_LINE))), *STUBBORN["coder"]],
}
"""The coder first concedes with a patch (on a path the config protects), then disputes."""

HOSTILE = "*a" * 8 + "b"
"""Eight wildcards, as many as a glob may have, each of which a backtracking matcher tries at
every `a` of a path."""
LONG_NAME = "app/" + "a" * 200 + ".py"


# Not a measure: the review takes a second or two; matching these globs by backtracking
# would take longer than anyone waits. The deadline only turns a stall into a failure.
@pytest.mark.timeout(90)
async def test_a_config_s_hostile_globs_do_not_stall_the_review(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    configure(
        github,
        f'paths:\n  exclude: ["{HOSTILE}"]\n'
        f'path_instructions:\n  - path: "{HOSTILE}"\n    instructions: HOSTILE-RULE\n'
        f'debate:\n  protected_paths: ["{HOSTILE}"]\n',
    )
    open_pull(github, diff=git_diff({LONG_NAME: (PAYMENTS_BEFORE, PAYMENTS_AFTER)}))
    claim = "`log` is not defined anywhere."
    llm = ScriptedLLM(
        by_role(
            tester=[report(finding(16, claim, path=LONG_NAME)), evaluations(accept("F1"))],
            coder=[answers(concede("F1", patch(16, LOG_LINE, path=LONG_NAME)))],
        )
    )

    await run_review(github, key, redis_url, llm)

    shown = "".join(b.text for r in llm.requests for b in r.blocks)
    assert f"+++ b/{LONG_NAME}" in shown
    assert "HOSTILE-RULE" not in shown
    (review,) = github.reviews(REPO, NUMBER)
    (comment,) = review.comments
    assert comment.path == LONG_NAME
    assert "```suggestion" in comment.body


# -- what is posted ---------------------------------------------------------------------------

NIT = finding(16, "`log` could be named more clearly.", "nit")
AGREED_NIT = {
    "tester": [report(NIT), evaluations(accept("F1"))],
    "coder": [answers(concede("F1", patch(16, LOG_LINE)))],
}


@pytest.mark.parametrize(("threshold", "posted"), [("nit", True), ("minor", False)])
async def test_findings_below_the_severity_threshold_are_counted_not_posted(
    github: FakeGitHub, key: AppKey, redis_url: str, threshold: str, posted: bool
) -> None:
    configure(github, f"min_severity: {threshold}\n")

    result, _ = await run_review(github, key, redis_url, ScriptedLLM(by_role(**AGREED_NIT)))

    assert len(github.reviews(REPO, NUMBER)) == int(posted)
    hidden = "1 finding below the config's `min_severity` (minor) not shown"
    assert (hidden in summary(github)) is not posted
    assert result == ("neutral" if posted else "success")


async def test_inline_comments_beyond_the_limit_are_listed_in_the_summary(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    configure(github, "max_inline_comments: 0\n")

    await run_review(github, key, redis_url, agreed())

    assert github.reviews(REPO, NUMBER) == []
    body = summary_comment(github)
    assert "### More findings" in body
    assert "These findings are not posted as inline comments." in body
    assert "is not defined anywhere: every refund raises NameError." in body


async def test_the_label_for_unresolved_findings_is_the_configs(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    configure(github, f"label: needs a human\n{NOT_AGREEING}")

    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))

    assert github.issue_labels(REPO, NUMBER) == ["needs a human"]
    assert "Unresolved" not in {label.name for label in github.labels(REPO)}


@pytest.mark.parametrize("event", ["COMMENT", "REQUEST_CHANGES"])
async def test_a_review_with_unresolved_findings_is_submitted_as_configured(
    github: FakeGitHub, key: AppKey, redis_url: str, event: str
) -> None:
    configure(github, f"review_event_on_unresolved: {event}\n{NOT_AGREEING}")

    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))

    (review,) = github.reviews(REPO, NUMBER)
    assert review.event == event


async def test_a_settled_review_is_a_comment_whatever_the_config(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    configure(github, "review_event_on_unresolved: REQUEST_CHANGES\n")

    await run_review(github, key, redis_url, agreed())

    (review,) = github.reviews(REPO, NUMBER)
    assert review.event == "COMMENT"


# -- how the debate runs ----------------------------------------------------------------------


@pytest.mark.parametrize(("rounds", "calls"), [(1, 3), (2, 4)])
async def test_the_debates_limits_come_from_the_config(
    github: FakeGitHub, key: AppKey, redis_url: str, rounds: int, calls: int
) -> None:
    configure(github, f"debate:\n  max_rounds: {rounds}\n  arbitration: false\n")
    stubborn = {"tester": STUBBORN["tester"] * 2, "coder": STUBBORN["coder"] * 2}
    llm = ScriptedLLM(by_role(**stubborn))

    result, _ = await run_review(github, key, redis_url, llm)

    # The seed, a coder answer and a tester evaluation in round 1; in round 2 the coder
    # repeats its answer, which drops the edge's budget and ends the debate.
    assert result == "action_required"
    assert len(llm.requests) == calls


async def test_the_models_of_each_role_come_from_the_config(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    configure(github, "models:\n  tester: claude-opus-5\n  arbiter: claude-haiku-5\n")
    with FakeMessagesAPI(QueuedResponder(**AGREED)) as api:
        llm = ClaudeLLM.connect(api_key=api.api_key, base_url=api.base_url, max_retries=0)
        settings = Settings(tiebreak_model="claude-sonnet-5-5")
        try:
            result, _ = await run_review(github, key, redis_url, llm, settings=settings)
        finally:
            await llm.aclose()

    assert result == "neutral"
    # The coder, which the config leaves alone, runs on the server's default model.
    assert [(r.tool, r.body["model"]) for r in api.requests] == [
        ("report_findings", "claude-opus-5"),
        ("answer_findings", "claude-sonnet-5-5"),
        ("evaluate_answers", "claude-opus-5"),
    ]
