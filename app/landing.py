"""Landing a result on a pull request: completing the check run, setting the label.

Shared by the review job and the commands that change a finished review (resolve, arbitrate).
A check run that asks for action offers the buttons that take it.
"""

from datetime import UTC, datetime
from typing import Any

from app import publish
from app.events import PullKey, PullRequestRef
from app.github import Installation

LABEL_COLOR = "d93f0b"
LABEL_ABOUT = "Tiebreak's tester and coder could not agree on a finding"

BUTTONS: list[dict[str, Any]] = [
    # GitHub's limits: label ≤ 20, description ≤ 40, identifier ≤ 20 characters.
    {
        "label": "Arbitrate",
        "description": "Send open findings to the arbiter",
        "identifier": "arbitrate",
    },
    {
        "label": "Accept",
        "description": "Accept the open findings as they are",
        "identifier": "accept",
    },
]


async def complete_check_run(
    github: Installation, ref: PullRequestRef, check_id: int, result: publish.CheckRunResult
) -> None:
    """Complete the check run with `result`, annotations in as many updates as they need."""
    first, *more = result.outputs()
    fields: dict[str, Any] = {
        "status": "completed",
        "conclusion": str(result.conclusion),
        "completed_at": now(),
        "output": first,
        "actions": BUTTONS if result.conclusion is publish.Conclusion.ACTION_REQUIRED else [],
    }
    await github.update_check_run(ref, check_id, fields)
    # GitHub appends the annotations of each further update to those already there.
    for output in more:
        await github.update_check_run(ref, check_id, {"output": output})


async def set_label(
    github: Installation, pull: PullKey, action: publish.LabelAction, name: str
) -> None:
    """Add or remove the label `name` (the config's choice) that marks unresolved findings."""
    if action is publish.LabelAction.ADD:
        await github.ensure_label(pull, name, LABEL_COLOR, LABEL_ABOUT)
        await github.add_label(pull, name)
    else:
        await github.remove_label(pull, name)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
