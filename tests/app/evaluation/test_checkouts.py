"""A case checked out for its findings' tests: a throw-away worktree of a real clone at the
introducing commit, gone afterwards however the case's reviews end; a case that cannot be
checked out is reviewed without tests, saying why."""

import json
from pathlib import Path
from typing import Any

import pytest

from agents.diff import Diff
from agents.models.llm import LLMRequest
from agents.models.scripted import Reply, ScriptedLLM
from agents.verification import Evidence
from app.evaluation.case_runner import CaseRunner
from app.evaluation.cases import Case, parse_cases
from app.evaluation.checkouts import Verifying
from app.evaluation.result_files import ResultFiles
from app.evaluation.results import Config
from app.verification.unsandboxed import Unsandboxed
from policies.verify import VerifyConfig
from tests.scenarios.shop import BUG_LINE, COMMAND, History, git, make_history


@pytest.fixture
def history(tmp_path: Path) -> History:
    return make_history(tmp_path)


def buggy(history: History, **changes: Any) -> Case:
    """The history's buggy case, as `tiebreak eval cases` would build it, with `changes`."""
    diff = git(history.repo, "show", "--format=", history.bug)
    line = {
        "id": "cart",
        "repo": "shop",
        "introducing_commit": history.bug,
        "base_commit": history.base,
        "diff": diff,
        "bug": [{"path": "shop/cart.py", "lines": [BUG_LINE]}],
        **changes,
    }
    (case,) = parse_cases([json.dumps({k: v for k, v in line.items() if v is not None})])
    return case


def verifying(history: History) -> Verifying:
    return Verifying(history.repo, VerifyConfig(command=COMMAND), Unsandboxed())


def worktrees(repo: Path) -> list[str]:
    listed = git(repo, "worktree", "list", "--porcelain")
    return [line for line in listed.splitlines() if line.startswith("worktree ")]


async def test_a_case_is_checked_out_detached_at_its_commit_and_removed_after(
    history: History,
) -> None:
    async with verifying(history).checkout(buggy(history)) as checkout:
        assert checkout.unverified is None
        assert git(checkout.tree, "rev-parse", "HEAD").strip() == history.bug
        assert git(checkout.tree, "branch", "--show-current").strip() == ""
        assert len(worktrees(history.repo)) == 2

    assert worktrees(history.repo) == [f"worktree {history.repo}"]
    assert not checkout.tree.exists()
    assert git(history.repo, "rev-parse", "HEAD").strip() == history.fix


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"base_commit": None}, "the case names no base commit"),
        ({"introducing_commit": "abc123"}, "its introducing commit 'abc123' is not a full id"),
        ({"introducing_commit": "d" * 40}, f"has no commit {'d' * 40}"),
        ({"base_commit": "e" * 40}, f"has no commit {'e' * 40}"),
    ],
)
async def test_a_case_that_cannot_be_checked_out_says_why(
    history: History, changes: dict[str, Any], reason: str
) -> None:
    async with verifying(history).checkout(buggy(history, **changes)) as checkout:
        assert checkout.unverified is not None
        assert reason in checkout.unverified
        async with checkout.proving(Diff.parse(buggy(history).diff)) as proving:
            assert proving is None

    assert worktrees(history.repo) == [f"worktree {history.repo}"]


def reporter(request: LLMRequest) -> Reply:
    finding = {"path": "shop/cart.py", "start_line": BUG_LINE, "end_line": BUG_LINE,
               "severity": "major", "claim": "The first price is never added."}  # fmt: skip
    return {"findings": [finding]}


async def test_the_worktree_is_gone_when_a_review_breaks_off(history: History) -> None:
    def breaks(request: LLMRequest) -> Reply:
        return RuntimeError("the reviewer's process died")

    runner = CaseRunner(ScriptedLLM(breaks), verifying=verifying(history))

    with pytest.raises(BaseException, match=r"died|unhandled errors"):
        await runner.run([buggy(history)], [Config.SINGLE])

    assert worktrees(history.repo) == [f"worktree {history.repo}"]


async def test_a_result_without_tests_is_run_again_when_tests_are_asked_for(
    history: History, tmp_path: Path
) -> None:
    files = ResultFiles(tmp_path / "results")
    case = buggy(history, base_commit=None)  # its findings are not tested: nothing runs
    llm = ScriptedLLM(reporter)
    (without,) = await CaseRunner(llm, result_files=files).run([case], [Config.SINGLE])

    (asked,) = await CaseRunner(llm, result_files=files, verifying=verifying(history)).run(
        [case], [Config.SINGLE]
    )
    (again,) = await CaseRunner(llm, result_files=files).run([case], [Config.SINGLE])

    assert [p.verdict for p in without.posted] == [None]
    assert [p.verdict for p in asked.posted] == [Evidence.NOT_RUN]
    assert asked.unverified is not None
    assert "no base commit" in asked.unverified
    # The second run paid for its review; the third took the stored one, tests and all.
    assert len(llm.requests) == 2
    assert again == asked
