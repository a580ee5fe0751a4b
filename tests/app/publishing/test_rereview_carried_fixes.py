"""Reconciling a later push's run with the earlier one: which earlier findings are carried
forward, and with what fix.

A fix the agents agreed on may replace lines other than its finding's own. A push that leaves
the finding's code alone can still move or change the fix's lines: what is carried then, and
so what the next review suggests and what `/tiebreak apply` commits, is checked here on the
texts a reader of the pull request would see.
"""

import pytest

from agents.diff import Diff
from agents.protocol import Patch
from agents.review import Review
from app.events import PullRequestRef
from app.publishing.plan import plan
from app.publishing.publication import Conversation, RunRecord
from app.publishing.rereview import RunScope, Standing, reconcile
from app.review.fixes import patched_files
from tests.kits.plan import RUN, result, unit

PATH = "app/m.py"
EARLIER, LATER = "a" * 40, "b" * 40
HEAD = [f"line {n}\n" for n in range(1, 41)]
"""The earlier head's file: `line 1` to `line 40`."""
FIX = Patch(path=PATH, start_line=30, end_line=30, replacement="line 30 FIXED\n")
"""The agreed fix of the finding on line 5: the cause is on line 30."""


def new_file_diff(lines: list[str]) -> Diff:
    """The diff of a pull request that adds `PATH` with `lines`."""
    header = f"diff --git a/{PATH} b/{PATH}\nnew file mode 100644\n--- /dev/null\n+++ b/{PATH}\n"
    return Diff.parse(f"{header}@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{n}" for n in lines))


def push(head: list[str]) -> Standing:
    """What stands after a push that leaves `PATH` as `head`, the earlier run having fixed the
    finding on line 5 with `FIX` and this run raising nothing."""
    claim = "Line five uses the value line thirty computes wrongly."
    earlier = RunRecord(
        run_id="run-1",
        ref=PullRequestRef(installation_id=1, owner="o", repo="r", number=7, head_sha=EARLIER),
        check_run_id=1,
        conclusion="neutral",
        review=Review(units=[unit(result("F1", PATH, 5, fix=FIX, claim=claim))]),
        diff=new_file_diff(HEAD).text,
    )
    return reconcile(
        Review(units=[]),
        new_file_diff(head),
        scope=RunScope.changed_since(EARLIER, frozenset({PATH})),
        earlier=earlier,
        threads=[],
    )


def suggested(standing: Standing, head: list[str]) -> list[tuple[int, str, str]]:
    """Each suggestion the next review posts: its line, the head's text there, what it
    suggests instead."""
    diff = new_file_diff(head)
    run = RUN.model_copy(update={"head_sha": LATER})
    review = plan(
        standing.review, diff, run=run, conversation=Conversation(threads=standing.threads)
    ).review
    out = []
    for comment in review.comments if review is not None else []:
        _, fence = comment.body.split("```suggestion\n", 1)
        out.append((comment.line, head[comment.line - 1], fence.split("\n```", 1)[0]))
    return out


def applied(standing: Standing, head: list[str]) -> dict[str, str]:
    """The files `/tiebreak apply` would commit on the run `standing` became."""
    record = RunRecord(
        run_id="run-2",
        ref=PullRequestRef(installation_id=1, owner="o", repo="r", number=7, head_sha=LATER),
        check_run_id=2,
        conclusion="neutral",
        review=standing.review,
        diff=new_file_diff(head).text,
    )
    return patched_files(record, {PATH: "".join(head)})


@pytest.mark.parametrize(
    "head",
    [
        pytest.param([*HEAD[:20], "new a\n", "new b\n", "new c\n", *HEAD[20:]], id="lines-above"),
        pytest.param([*HEAD[:29], "line 30, edited\n", *HEAD[30:]], id="its-line-edited"),
        pytest.param([*HEAD[:29], *HEAD[30:]], id="its-line-removed"),
    ],
)
def test_a_fix_whose_lines_moved_or_changed_is_not_carried(head: list[str]) -> None:
    # Line 5 and the lines around it are as they were: only the fix's line 30 is not.
    assert head[2:7] == HEAD[2:7]

    standing = push(head)

    assert standing.review.findings == []
    assert standing.carried == 0
    assert standing.gone == []  # fixed, not open: nothing to answer
    assert suggested(standing, head) == []
    assert applied(standing, head) == {}


@pytest.mark.parametrize(
    "head",
    [
        pytest.param(HEAD, id="unchanged"),
        pytest.param([*HEAD[:35], "new a\n", *HEAD[35:]], id="lines-below"),
        pytest.param([*HEAD[:9], "line 10, edited\n", *HEAD[10:]], id="other-lines-edited"),
    ],
)
def test_a_fix_whose_lines_stand_where_they_were_is_carried_and_applies_there(
    head: list[str],
) -> None:
    standing = push(head)

    assert [(f.finding.id, f.patch) for f in standing.review.findings] == [("F1", FIX)]
    assert standing.carried == 1
    assert suggested(standing, head) == [(30, "line 30\n", "line 30 FIXED")]
    fixed = [*head[:29], "line 30 FIXED\n", *head[30:]]
    assert applied(standing, head) == {PATH: "".join(fixed)}
