"""A pull request larger than its token ceiling, reviewed by the App: the riskiest files are
reviewed, and the summary comment and the check run name every file left, with the reason and
the estimate that foresaw it."""

import html
import re

from agents.models.llm import LLMRequest, LLMResponse, Usage
from app.events import PullRequestRef
from policies.config import CONFIG_PATH
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import run_review, summary
from tests.scenarios.coverage import (
    CALL_INPUT_TOKENS,
    CALL_OUTPUT_TOKENS,
    LARGE_DIFF,
    RISKIEST_FIRST,
    ceiling_for_two_units,
)
from tests.scenarios.reviews import BASE, REF, REPO

NUMBER = 7
HEAD = "c" * 40
REVIEWED, LEFT = RISKIEST_FIRST[:2], RISKIEST_FIRST[2:]


class NothingFound:
    """Every unit's report finds nothing, in one call billed as a large unit's is; the files
    each call read are kept."""

    def __init__(self) -> None:
        self.read: list[tuple[str, ...]] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        diff = request.blocks[0].text
        self.read.append(tuple(p for p in RISKIEST_FIRST if f"+++ b/{p}" in diff))
        usage = Usage(input_tokens=CALL_INPUT_TOKENS, output_tokens=CALL_OUTPUT_TOKENS)
        return LLMResponse(tool_input={"findings": []}, usage=usage)


def not_reviewed(text: str) -> str:
    """The `Not reviewed` section of a summary."""
    return text.split("#### Not reviewed", 1)[1].split("####", 1)[0]


async def test_the_summary_and_the_check_run_name_every_file_left_unreviewed(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    config = f"debate:\n  token_ceiling: {ceiling_for_two_units()}\n"
    github.add_pull(
        REPO,
        NUMBER,
        head_sha=HEAD,
        base_sha=BASE,
        diff=LARGE_DIFF,
        base_files={CONFIG_PATH: config},
    )
    ref = PullRequestRef.model_validate({**REF.model_dump(), "number": NUMBER, "head_sha": HEAD})
    model = NothingFound()

    # One unit at a time: the units reserve on the run's ceiling in the order they come.
    result, _ = await run_review(github, key, redis_url, model, ref, unit_concurrency=1)

    assert result == "action_required"
    assert model.read == [(path,) for path in REVIEWED]
    (check,) = [c for c in github.check_runs(REPO) if c.head_sha == HEAD]
    assert "3 units not reviewed" in check.output["title"]
    for text in (summary(github, NUMBER), check.output["summary"]):
        section = not_reviewed(text)
        named = [html.unescape(n) for n in re.findall(r"<code>([^<]+)</code>", section)]
        assert [n for n in named if n in RISKIEST_FIRST] == list(LEFT), section
        assert section.count("token ceiling reached") == len(LEFT)
        assert f"more than its ceiling of {ceiling_for_two_units():,}" in section
        assert not any(path in section for path in REVIEWED)


async def test_the_summary_names_a_binary_file_as_not_reviewed(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    image = "docs/logo.png"
    binary = (
        f"diff --git a/{image} b/{image}\nindex f584f40..6bf43ff 100644\n"
        f"Binary files a/{image} and b/{image} differ\n"
    )
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=LARGE_DIFF + binary)
    ref = PullRequestRef.model_validate({**REF.model_dump(), "number": NUMBER, "head_sha": HEAD})

    result, _ = await run_review(github, key, redis_url, NothingFound(), ref)

    assert result == "success"
    (check,) = [c for c in github.check_runs(REPO) if c.head_sha == HEAD]
    for text in (summary(github, NUMBER), check.output["summary"]):
        section = not_reviewed(text)
        assert f"- <code>{image}</code>: a binary file: no lines to review" in section, section
        assert not any(path in section for path in RISKIEST_FIRST)
