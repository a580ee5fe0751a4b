"""Reviews of a pull request over a sequence of pushes, against the fake GitHub.

A real worker and a real Redis review each push; the tester is scripted to raise what is
actually in the code it is shown, so a finding is raised again exactly while its code is
there. What a user would notice is checked: comments are not posted twice, the summary is one
comment edited in place, a fixed finding's thread is answered, threads people resolved or
marked 👎 are not raised again, and a force-push gets a full review.
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM
from app.events import PullRequestRef
from app.publishing.markers import ANSWERED_MARKER
from tests.fakes.github_api import AppKey, FakeGitHub, ReviewComment
from tests.kits.review import run_review, summaries
from tests.scenarios.debates import (
    ORDERS,
    ORDERS_V1,
    answers,
    dispute,
    evaluations,
    finding,
    git_diff,
    reject,
    report,
)
from tests.scenarios.reviews import BASE, INSTALLATION, REPO, REPO_ID

PULL = 7
NOTES = "app/notes.py"
ORDERS_V2 = ORDERS_V1.replace("    send(order.address)", "    order.carrier.send(order.address)")
ORDERS_V3 = ORDERS_V2 + '\n\ndef cancel(order):\n    order.state = "cancelled"\n    return order\n'
NOTES_V1 = """\
def note(order, text):
    order.notes.append(text)
    return eval(text)
"""

FLOATS = "Prices are floats: the total drifts by cents."
RATE = "The rate is never checked: a rate above 1 makes the total negative."
SEND = "Nothing imports send: every shipment raises NameError."
EVAL = "The note is passed to eval, which runs whatever a customer writes."
PROBLEMS = {
    (ORDERS, "    return sum(i.price"): ("major", FLOATS),
    (ORDERS, "    return order.total * rate"): ("major", RATE),
    (ORDERS, "    send(order.address)"): ("blocker", SEND),
    (NOTES, "    return eval(text)"): ("blocker", EVAL),
}
"""The tester's findings: a line of a file that starts so → the finding on that line."""


@dataclass
class Branch:
    """The pull request's branch on the fake GitHub, pushed to commit by commit."""

    github: FakeGitHub
    files: dict[str, str] = field(default_factory=dict)
    heads: list[str] = field(default_factory=list)

    def push(self, files: dict[str, str], *, parent: str | None = None) -> PullRequestRef:
        """Move the head to a new commit with `files`; `parent` names another parent than
        the current head (a force-push, a rebase)."""
        sha = f"{len(self.heads) + 1:x}" * 40
        self.files = dict(files)
        self.heads.append(sha)
        self.github.add_pull(
            REPO,
            PULL,
            head_sha=sha,
            base_sha=BASE,
            head_ref="orders",
            diff=git_diff({path: ("", text) for path, text in files.items()}),
            head_files=files,
            parent=parent,
        )
        return PullRequestRef(
            installation_id=INSTALLATION,
            owner="Codertocat",
            repo="Hello-World",
            number=PULL,
            repository_id=REPO_ID,
            head_sha=sha,
        )

    def problems(self, shown: str) -> list[dict[str, Any]]:
        """The findings on the files in the diff `shown` to the tester."""
        found = []
        for (path, start), (severity, claim) in PROBLEMS.items():
            if f"+++ b/{path}" not in shown or path not in self.files:
                continue
            for number, line in enumerate(self.files[path].splitlines(), 1):
                if line.startswith(start):
                    found.append(finding(number, claim, severity, path))
        return found


def stubborn(branch: Branch) -> ScriptedLLM:
    """A tester that raises what the code it is shown has; a coder that disputes all of it;
    neither gives in (arbitration is off), so every finding stays unresolved."""

    def script(request: LLMRequest) -> dict[str, Any]:
        shown = "".join(block.text for block in request.blocks)
        match request.tool.name:
            case "report_findings":
                return report(*branch.problems(shown))
            case "answer_findings":
                return answers(*(dispute(f, "It is fine as it is.") for f in request.subject))
            case "evaluate_answers":
                return evaluations(*(reject(f, "It is not fine.") for f in request.subject))
        raise AssertionError(f"unexpected call: {request.tool.name}")

    return ScriptedLLM(script)


def threads(github: FakeGitHub) -> dict[str, ReviewComment]:
    """Tiebreak's review threads by the claim they are about."""
    roots = [c for c in github.review_comments(REPO, PULL) if c.in_reply_to is None]
    return {claim: c for c in roots for claim in (FLOATS, RATE, SEND, EVAL) if claim in c.body}


def replies(github: FakeGitHub, thread: ReviewComment) -> list[ReviewComment]:
    return [c for c in github.review_comments(REPO, PULL) if c.in_reply_to == thread.id]


def reviewed_paths(llm: ScriptedLLM) -> set[str]:
    """The files the tester was shown for its first reports."""
    shown = "".join(
        block.text
        for request in llm.requests
        if request.tool.name == "report_findings"
        for block in request.blocks
    )
    return {path for path in (ORDERS, NOTES) if f"+++ b/{path}" in shown}


async def review(
    github: FakeGitHub, key: AppKey, redis_url: str, ref: PullRequestRef, branch: Branch
) -> ScriptedLLM:
    llm = stubborn(branch)
    result, _ = await run_review(github, key, redis_url, llm, ref, trigger="synchronize")
    assert result in ("action_required", "success"), result
    return llm


@pytest.fixture
def branch(github: FakeGitHub) -> Branch:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    return Branch(github)


async def test_a_push_that_fixes_one_finding_answers_its_thread_and_posts_nothing_twice(
    github: FakeGitHub, key: AppKey, redis_url: str, branch: Branch
) -> None:
    first = await review(
        github, key, redis_url, branch.push({ORDERS: ORDERS_V1, NOTES: NOTES_V1}), branch
    )
    assert reviewed_paths(first) == {ORDERS, NOTES}
    (posted,) = github.reviews(REPO, PULL)
    assert len(posted.comments) == 4
    assert set(threads(github)) == {FLOATS, RATE, SEND, EVAL}
    (summary,) = summaries(github, PULL)
    assert github.issue_labels(REPO, PULL) == ["Unresolved"]

    second = await review(
        github, key, redis_url, branch.push({ORDERS: ORDERS_V2, NOTES: NOTES_V1}), branch
    )

    # Only the file the push changed was debated again.
    assert reviewed_paths(second) == {ORDERS}
    # No new review, no comment posted twice.
    assert len(github.reviews(REPO, PULL)) == 1
    roots = [c for c in github.review_comments(REPO, PULL) if c.in_reply_to is None]
    assert len(roots) == 4
    # One reply, on the fixed finding's thread.
    by_claim = threads(github)
    (answer,) = [c for c in github.review_comments(REPO, PULL) if c.in_reply_to is not None]
    assert answer.in_reply_to == by_claim[SEND].id
    assert answer.body.startswith(f"No longer found at <code>{branch.heads[1][:7]}</code>")
    # The summary is the same comment, edited.
    (edited,) = summaries(github, PULL)
    assert edited.id == summary.id
    assert edited.body != summary.body
    assert "#### No longer found" in edited.body
    assert "Nothing imports send" in edited.body
    assert f"the 1 file changed since <code>{branch.heads[0][:7]}</code>" in edited.body
    assert "1 earlier finding on unchanged code stand" in edited.body
    # The carried finding is counted; its unit, debated and paid for by the first run, is not.
    assert "**3 findings** (3 unresolved) · 1 unit ·" in edited.body
    assert edited.body.count("| 🟠 Major |") == 2
    assert edited.body.count("| 🔴 Blocker |") == 1
    # Three findings are still open: the label stays, the check run says so.
    assert github.issue_labels(REPO, PULL) == ["Unresolved"]
    check = github.check_runs(REPO)[-1]
    assert (check.head_sha, check.conclusion) == (branch.heads[1], "action_required")
    assert check.output["title"] == "3 unresolved findings"


async def test_a_review_of_the_same_head_again_posts_nothing_twice(
    github: FakeGitHub, key: AppKey, redis_url: str, branch: Branch
) -> None:
    ref = branch.push({ORDERS: ORDERS_V1, NOTES: NOTES_V1})
    await review(github, key, redis_url, ref, branch)
    (summary,) = summaries(github, PULL)

    llm = stubborn(branch)
    result, _ = await run_review(github, key, redis_url, llm, ref, rerun="asked")

    assert result == "action_required"
    assert reviewed_paths(llm) == {ORDERS, NOTES}
    assert len(github.reviews(REPO, PULL)) == 1
    assert len(github.review_comments(REPO, PULL)) == 4
    (again,) = summaries(github, PULL)
    assert again.id == summary.id
    assert "again: a review of the same commit was asked for" in again.body


async def test_threads_people_resolved_or_disliked_are_not_raised_again(
    github: FakeGitHub, key: AppKey, redis_url: str, branch: Branch
) -> None:
    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V1, NOTES: NOTES_V1}), branch)
    by_claim = threads(github)
    github.set_permission(REPO, "hubot", "write")
    github.resolve_thread(REPO, PULL, by_claim[FLOATS].id, by="hubot")
    github.resolve_thread(REPO, PULL, by_claim[SEND].id, by="hubot")
    github.add_reaction(REPO, by_claim[EVAL].id, "-1", user="hubot")

    # The tester raises FLOATS and RATE again; EVAL's file is not reviewed again; SEND's code
    # is gone, but its thread is resolved: nobody is told it is fixed.
    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V3, NOTES: NOTES_V1}), branch)

    assert len(github.reviews(REPO, PULL)) == 1
    # No new thread; one reply, the learning the writer's 👎 taught.
    assert [c.in_reply_to for c in github.review_comments(REPO, PULL)[4:]] == [by_claim[EVAL].id]
    (summary,) = summaries(github, PULL)
    assert (
        "2 findings not raised again: a writer or Tiebreak resolved its thread, or a writer "
        "marked it 👎"
    ) in summary.body
    # The table lists RATE's finding alone (on line 6), linked to its thread.
    assert "| <code>app/orders.py:6</code> |" in summary.body
    assert f"#discussion_r{by_claim[RATE].id})" in summary.body
    assert summary.body.count("| unresolved |") == 1
    assert github.issue_labels(REPO, PULL) == ["Unresolved"]  # RATE is still open

    # Once the last open finding's thread is resolved too, nothing is left open.
    github.resolve_thread(REPO, PULL, by_claim[RATE].id, by="hubot")
    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V3, NOTES: NOTES_V1}), branch)

    assert github.issue_labels(REPO, PULL) == []
    assert github.check_runs(REPO)[-1].conclusion == "success"
    assert len(summaries(github, PULL)) == 1


async def test_fixing_the_last_open_finding_takes_the_label_off(
    github: FakeGitHub, key: AppKey, redis_url: str, branch: Branch
) -> None:
    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V1}), branch)
    by_claim = threads(github)
    github.set_permission(REPO, "hubot", "maintain")
    for claim in (FLOATS, RATE):
        github.resolve_thread(REPO, PULL, by_claim[claim].id, by="hubot")

    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V2}), branch)

    (answer,) = replies(github, by_claim[SEND])
    assert ANSWERED_MARKER in answer.body
    assert github.issue_labels(REPO, PULL) == []
    assert github.check_runs(REPO)[-1].conclusion == "success"

    # A later run does not answer the same thread twice.
    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V3}), branch)
    assert len(replies(github, by_claim[SEND])) == 1


async def test_a_force_push_gets_a_full_review_without_duplicates(
    github: FakeGitHub, key: AppKey, redis_url: str, branch: Branch
) -> None:
    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V1, NOTES: NOTES_V1}), branch)

    # The branch is rebuilt on the base: the reviewed head is no longer in its history.
    rebased = branch.push({ORDERS: ORDERS_V2, NOTES: NOTES_V1}, parent=BASE)
    llm = await review(github, key, redis_url, rebased, branch)

    assert reviewed_paths(llm) == {ORDERS, NOTES}
    assert len(github.reviews(REPO, PULL)) == 1
    assert len([c for c in github.review_comments(REPO, PULL) if c.in_reply_to is None]) == 4
    (answer,) = replies(github, threads(github)[SEND])
    assert "No longer found" in answer.body
    (summary,) = summaries(github, PULL)
    old = branch.heads[0][:7]
    assert f"again: {old}, reviewed last, is no longer in its history" in summary.body


async def test_a_changed_line_is_a_new_finding_and_is_posted(
    github: FakeGitHub, key: AppKey, redis_url: str, branch: Branch
) -> None:
    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V1}), branch)
    changed = ORDERS_V1.replace("return order.total * rate", "return order.total * rate * 1")

    await review(github, key, redis_url, branch.push({ORDERS: changed}), branch)

    second = github.reviews(REPO, PULL)[1]
    (comment,) = second.comments
    assert RATE in comment.body
    assert comment.line == 6
    assert "1 new finding" in second.body
    # The earlier thread is not told the finding is gone: it is raised on the changed code.
    assert not [c for c in github.review_comments(REPO, PULL) if c.in_reply_to is not None]


async def test_a_changed_config_gets_a_full_review(
    github: FakeGitHub, key: AppKey, redis_url: str, branch: Branch
) -> None:
    await review(github, key, redis_url, branch.push({ORDERS: ORDERS_V1, NOTES: NOTES_V1}), branch)
    config = "debate:\n  arbitration: false\nmin_severity: minor\n"
    github.set_file(REPO, BASE, ".github/tiebreak.yml", config)

    llm = await review(
        github, key, redis_url, branch.push({ORDERS: ORDERS_V2, NOTES: NOTES_V1}), branch
    )

    assert reviewed_paths(llm) == {ORDERS, NOTES}
    assert "again: the repository's config changed" in summaries(github, PULL)[0].body
    assert len(github.review_comments(REPO, PULL)) == 5  # four threads, one answered
