"""Transcripts of real debates (the engine, driven by scripted models) for the page's tests.

`sample_record` is an ordinary review: one finding fixed by agreement, one the agents
deadlock on until the arbiter accepts the code with a warning. `hostile_record` is a pull
request built to break a page: markup and scripts in the diff, the title, the findings and the
patches, and a line far wider than any screen. `panel_record` is a review by a panel of
testers.
"""

import time
from collections.abc import Mapping
from typing import Any

from agents.debate.engine import Debate
from agents.diff import Diff
from agents.models.llm import LLMRequest, LLMResponse
from agents.models.scripted import Reply, ScriptedLLM, ScriptStep, by_agent, usage_for
from agents.models.tokens import typical_tokens
from agents.review import Review
from app.events import PullRequestRef
from app.store.transcripts import TranscriptRecord
from policies.debate import DebatePolicy
from tests.scenarios.debates import (
    LOG_FIX,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    UNDEFINED,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    finding,
    git_diff,
    patch,
    reject,
    report,
    rulings,
    warn,
)

SAMPLE_REF = PullRequestRef(
    installation_id=1, owner="octo", repo="shop", number=7, head_sha="3f2c9a1" + "0" * 33
)
ROUNDING = finding(
    7, "Each share is rounded down to the cent: three parts of 10.00 add up to 9.99.", "major"
)

PWNED = "window.pwned"
"""What every script smuggled into the hostile transcript would set."""
SCRIPT = f"<script>{PWNED} = 1</script>"
IMAGE = f'<img src=x onerror="{PWNED} = 2">'
HOSTILE_TITLE = f"Fix </title>{SCRIPT} and {IMAGE}"
HOSTILE_CLAIM = f"The page runs {SCRIPT} and {IMAGE} on every visitor."
HOSTILE_ARGUMENT = f'"></p></li></ol>{SCRIPT}<p class="'
WIDE = "const data = '" + "A" * 100_000 + "';"
"""A generated line a hundred thousand characters wide."""
PAGE = "web/index.html"
PAGE_BEFORE = "<html>\n<body>\n</body>\n</html>\n"
PAGE_AFTER = f"<html>\n<body>\n{SCRIPT}\n{IMAGE}\n<script>{WIDE}</script>\n</body>\n</html>\n"


def _timed(script: Any) -> Any:
    """A script whose replies come with usage, and with a second and a half per call."""

    def answer(request: LLMRequest) -> Reply:
        reply = script(request)
        usage = usage_for(request, reply)
        cached = typical_tokens(request.system)
        usage = usage.model_copy(
            update={
                "input_tokens": max(usage.input_tokens - cached, 0),
                "cache_read_input_tokens": cached,
            }
        )
        return LLMResponse(tool_input=reply, usage=usage, seconds=1.5)

    return answer


def _sample(request: LLMRequest) -> dict[str, Any]:
    subject = request.subject
    match request.tool.name:
        case "report_findings":
            return report(UNDEFINED, ROUNDING)
        case "answer_findings":
            return answers(
                *(
                    concede("F1", LOG_FIX, "Right: `log` is never imported; use the logger.")
                    if fid == "F1"
                    else dispute(fid, "Rounding each share to the cent is what the ledger wants.")
                    for fid in subject
                )
            )
        case "evaluate_answers":
            return evaluations(
                *(
                    accept(fid, "The logger call fixes it.")
                    if fid == "F1"
                    else reject(fid, "The cent lost on every split is real money.")
                    for fid in subject
                )
            )
        case _:
            return rulings(
                warn(
                    "F2",
                    "Splits lose up to one cent per part; the ledger reconciles the remainder.",
                )
            )


def _hostile(request: LLMRequest) -> dict[str, Any]:
    match request.tool.name:
        case "report_findings":
            return report(
                finding(3, HOSTILE_CLAIM, "blocker", path=PAGE),
                finding(5, f"A 100,000-character line: {IMAGE}", "minor", path=PAGE),
            )
        case "answer_findings":
            return answers(
                concede("F1", patch(3, f"</pre>{SCRIPT}", path=PAGE), HOSTILE_ARGUMENT),
                concede("F2", patch(5, WIDE[:30_000] + IMAGE, path=PAGE), HOSTILE_ARGUMENT),
            )
        case _:
            return evaluations(accept("F1", HOSTILE_ARGUMENT), accept("F2", HOSTILE_ARGUMENT))


async def _record(
    script: Any,
    diff_text: str,
    *,
    title: str,
    run_id: str,
    policy: DebatePolicy | None = None,
    **fields: Any,
) -> TranscriptRecord:
    diff = Diff.parse(diff_text)
    debate = Debate(ScriptedLLM(_timed(script)), policy)
    outcomes = [await debate.run(u) for u in diff.units()]
    review = Review(units=outcomes)
    started = time.time() - 3600
    return TranscriptRecord(
        run_id=run_id,
        ref=SAMPLE_REF,
        title=title,
        html_url="https://github.com/octo/shop/pull/7",
        started_at=started,
        finished_at=started + 42.7,
        review=review,
        diff=diff_text,
        spent=review.usage.billed,
        ceiling=200_000,
        **{"conclusion": "action_required", **fields},
    )


async def sample_record(run_id: str = "review:octo/shop#7@3f2c9a1") -> TranscriptRecord:
    diff = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})
    return await _record(
        _sample, diff, title="Split payments in cents", run_id=run_id, conclusion="neutral"
    )


async def hostile_record(run_id: str = "review:octo/shop#7@hostile") -> TranscriptRecord:
    diff = git_diff({PAGE: (PAGE_BEFORE, PAGE_AFTER)})
    return await _record(_hostile, diff, title=HOSTILE_TITLE, run_id=run_id)


async def panel_record(
    script: Mapping[str, list[ScriptStep]], run_id: str, testers: int = 3, **limits: Any
) -> TranscriptRecord:
    """A review of the payments change by a panel of `testers`, answering from `script` by
    agent (see :mod:`tests.kits.panel`)."""
    diff = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})
    policy = DebatePolicy(testers=testers, **limits)
    return await _record(by_agent(script), diff, title="Log refunds", run_id=run_id, policy=policy)
