"""The walkthrough that opens the summary comment, through a real worker and the fake GitHub.

The tester is scripted to find nothing; the walkthrough's call describes the files it is
shown. What a person sees is checked: the summary names each changed file once, a push edits
the same comment with the new file's line, and model text cannot ping anyone or show an image.
"""

from typing import Any

from agents.llm import LLMRequest
from agents.scripted import ScriptedLLM, by_role
from tests.app.jobs.test_rereview import NOTES, NOTES_V1, Branch
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import run_review, summaries
from tests.scenarios.debates import ORDERS, ORDERS_V1

NO_FINDINGS: dict[str, Any] = {"findings": []}


def describing(extra: str = "") -> ScriptedLLM:
    """A tester that finds nothing, and a walkthrough naming each file it is shown."""

    def walkthrough(request: LLMRequest) -> dict[str, Any]:
        diff = request.blocks[0].text
        files = [p for p in (ORDERS, NOTES) if f"+++ b/{p}" in diff]
        return {
            "description": f"Adds order handling. {extra}",
            "files": [{"path": p, "summary": f"new module {p.split('/')[-1]}"} for p in files],
            "attention": [{"path": files[0], "why": f"totals are computed here {extra}"}],
            "effort": 2,
        }

    return ScriptedLLM(by_role(tester=[NO_FINDINGS] * 5), walkthrough=walkthrough)


async def test_the_summary_opens_with_a_walkthrough_naming_each_changed_file_once(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    ref = Branch(github).push({ORDERS: ORDERS_V1})

    await run_review(github, key, redis_url, describing(), ref)

    (comment,) = summaries(github, ref.number)
    walkthrough = comment.body.split("#### Walkthrough", 1)[1]
    assert "Adds order handling." in walkthrough
    assert walkthrough.count(ORDERS) == 2  # its line, and where to look
    assert "new module orders.py" in walkthrough
    assert "**Review effort:** 2/5" in walkthrough


async def test_a_push_edits_the_walkthrough_in_place_with_the_new_files_line(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    branch = Branch(github)
    first = branch.push({ORDERS: ORDERS_V1})
    await run_review(github, key, redis_url, describing(), first)
    (before,) = summaries(github, first.number)

    second = branch.push({ORDERS: ORDERS_V1, NOTES: NOTES_V1})
    await run_review(github, key, redis_url, describing(), second)

    (after,) = summaries(github, second.number)
    assert after.id == before.id
    assert "new module notes.py" in after.body
    assert "new module orders.py" in after.body


async def test_a_walkthrough_cannot_ping_a_team_or_show_an_image(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    ref = Branch(github).push({ORDERS: ORDERS_V1})
    hostile = "cc @octo/security and @mona ![pixel](https://evil.example/p.png)"

    await run_review(github, key, redis_url, describing(hostile), ref)

    (comment,) = summaries(github, ref.number)
    assert "@octo/security" not in comment.body
    assert "@mona" not in comment.body
    assert "![pixel](" not in comment.body
    assert "](https://evil.example" not in comment.body
