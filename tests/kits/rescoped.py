"""A pull request of two files too large to share a review unit, reviewed at its first head and
again once a push changed the smaller one alone: the later run debates that file alone, in its
unit `u1`, and carries the other file's finding in the first run's unit (`u1@…`). A tester that
raises what the files hold and a coder that disputes all of it leave both findings open, for
the commands and replies that come after."""

from typing import Any

from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM
from app.events import PullRequestRef
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import run_review
from tests.scenarios.debates import answers, dispute, evaluations, finding, git_diff, reject, report
from tests.scenarios.reviews import BASE, REF, REPO

CORE, EXTRA = "app/core.py", "app/extra.py"
CORE_CLAIM = "charge passes the amount to eval: a customer's text runs as code."
EXTRA_CLAIM = "refund passes the amount to exec: a customer's text runs as code."
CONFIG = "debate:\n  arbitration: false\n  token_ceiling: 100000000\n"


def _module(head: str, lines: int) -> str:
    """A module whose problem is on line 2, and `lines` lines more: each file alone fits a
    review unit, both together do not."""
    return head + "".join(f"VALUE_{n:05} = {n}\n" for n in range(lines))


CORE_V1 = _module("def charge(amount):\n    return eval(amount)\n", 2000)
EXTRA_V1 = _module("def refund(amount):\n    return exec(amount)\n", 1700)
EXTRA_V2 = EXTRA_V1 + "DONE = True\n"
PROBLEMS = {CORE: CORE_CLAIM, EXTRA: EXTRA_CLAIM}


def shown(request: LLMRequest) -> set[str]:
    """The files whose diffs the request carries."""
    text = "".join(block.text for block in request.blocks)
    return {path for path in PROBLEMS if f"+++ b/{path}" in text}


def stubborn(request: LLMRequest) -> dict[str, Any]:
    """The tester raises the problem of each file it is shown, the coder disputes it, the
    tester rejects the answer."""
    match request.tool.name:
        case "report_findings":
            return report(*(finding(2, PROBLEMS[p], "blocker", p) for p in sorted(shown(request))))
        case "answer_findings":
            return answers(*(dispute(f, "It is fine as it is.") for f in request.subject))
        case "evaluate_answers":
            return evaluations(*(reject(f, "It is not fine.") for f in request.subject))
    raise AssertionError(f"unexpected call: {request.tool.name}")


def _push(github: FakeGitHub, head: str, files: dict[str, str]) -> PullRequestRef:
    github.add_pull(
        REPO,
        REF.number,
        head_sha=head,
        base_sha=BASE,
        diff=git_diff({path: (None, text) for path, text in files.items()}),
        head_files=files,
    )
    return REF.model_copy(update={"head_sha": head})


async def rescoped_review(github: FakeGitHub, key: AppKey, redis_url: str) -> PullRequestRef:
    """Both files reviewed at a first head, then the push that changes EXTRA reviewed: the
    latest run's head."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    for head, files in (
        ("1" * 40, {CORE: CORE_V1, EXTRA: EXTRA_V1}),
        ("2" * 40, {CORE: CORE_V1, EXTRA: EXTRA_V2}),
    ):
        ref = _push(github, head, files)
        llm = ScriptedLLM(stubborn)
        result, _ = await run_review(github, key, redis_url, llm, ref, trigger="synchronize")
        assert result == "action_required", result
    assert [shown(r) for r in llm.requests if r.tool.name == "report_findings"] == [{EXTRA}]
    return ref


def thread_of(github: FakeGitHub, path: str) -> int:
    """The thread Tiebreak started on the finding in `path`."""
    roots = [c for c in github.review_comments(REPO, REF.number) if c.in_reply_to is None]
    (comment,) = [c for c in roots if c.path == path]
    return comment.id
