"""A finding's inline review comment: its debate and, if fixed, a committable suggestion,
within GitHub's limit on a comment's body however long the finding's parts are.

A patch, a test and the agents' text may each be long, and escaping makes model text longer
still, so the limit is measured on the body as it is sent. A body that would not fit shows
less of the finding (:class:`~app.publishing.finding_text.Extent`): of its test's output
first, then of its test, then of each piece of prose, `…` marking each cut, and says so
with a link to the transcript, which has them whole. A suggestion is never cut, since one
cut short would commit a broken file: when it does not fit beside the least of the rest, the
comment says why in its place, and shows the rest as fully as it then can. What still does
not fit (a behaviour change citing many long paths, say) is cut after its last whole block,
as the summary is.
"""

from collections.abc import Callable

from app.bodies import LIMIT
from app.publishing import markdown as md
from app.publishing.finding_text import MOST_CUT, Extent, agreement, debate, resolution
from app.publishing.text import FindingEntry, heading, rounds, truncation_note


def comment_body(entry: FindingEntry, *, ending: str, details_url: str | None = None) -> str:
    """The inline review comment for `entry`, closed by `ending` (its fingerprint), in at most
    :data:`~app.bodies.LIMIT` characters; `details_url`: the run's transcript, if it has one."""
    result = entry.result
    header = f"**{heading(result)}** · {resolution(result)} · {agreement(result)}"
    footer = (
        f"<sub>Tiebreak · {entry.label} · {rounds(result)} · {result.tokens:,} billed tokens</sub>"
    )
    last = f"{footer}\n\n{ending}"

    def blocks(extent: Extent) -> list[str]:
        shown = [header, *debate(result, entry.thread, committable=True, extent=extent)]
        if extent.cut:
            shown.append(_cut_note(details_url))
        return [f"{block}\n\n" for block in shown]

    def body(extent: Extent) -> str:
        return "".join(blocks(extent)) + last

    for suggestion in (True, False):
        fitted = _least_cut(body, suggestion=suggestion)
        if fitted is not None:
            return fitted
    least = blocks(Extent.less(MOST_CUT, suggestion=False))
    return md.fit(least, LIMIT - len(last) - 1, truncation_note(details_url)) + "\n" + last


def _least_cut(body: Callable[[Extent], str], *, suggestion: bool) -> str | None:
    """The body showing the most (:meth:`Extent.less` the least cut) that fits GitHub's limit,
    with or without its suggestion; None if even the least shown does not fit. A larger cut
    makes a body no longer, but for the marker of a cut (a line or so), so a bisection finds a
    cut that fits and is as small as a marker allows."""
    found = body(Extent.less(0, suggestion=suggestion))
    if len(found) <= LIMIT:
        return found
    found = body(Extent.less(MOST_CUT, suggestion=suggestion))
    if len(found) > LIMIT:
        return None
    low, high = 0, MOST_CUT
    while high - low > 1:
        middle = (low + high) // 2
        tried = body(Extent.less(middle, suggestion=suggestion))
        if len(tried) <= LIMIT:
            high, found = middle, tried
        else:
            low = middle
    return found


def _cut_note(details_url: str | None) -> str:
    whole = f" [The transcript]({details_url}) has the whole debate." if details_url else ""
    return (
        f"_Shortened to fit GitHub's limit of {LIMIT:,} characters on a comment: “…” marks "
        f"each cut.{whole}_"
    )
