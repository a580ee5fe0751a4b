"""What Tiebreak says about learnings: when it learns one, `/tiebreak learnings` and
`/tiebreak forget`. Pure, no I/O.

A learned rule is model text (the tester wrote it from a thread): it goes through
:func:`app.publishing.markdown.inline` wherever it is shown. Globs and logins are shown as code.
"""

from collections.abc import Iterable, Sequence

from app.publishing import markdown as md
from policies.learnings import MAX_LEARNINGS, MAX_RULE_CHARS, Learning

LISTED = 30
"""Learnings `/tiebreak learnings` lists in one comment; a count says how many more there are."""
RULE_LIMIT = 320


def learned(item: Learning, dropped: int | None) -> str:
    """The paragraph a reply adds when the thread taught Tiebreak something; `dropped`, the
    oldest learning it pushed out."""
    text = (
        f"\n\nLearned {item.label} for {_globs(item)}: {md.inline(item.rule, RULE_LIMIT)} "
        f"Later reviews of these files read it; `/tiebreak forget {item.number}` removes it."
    )
    if dropped is not None:
        text += (
            f" This repository keeps {MAX_LEARNINGS} learnings: the oldest, "
            f"#{dropped}, was dropped."
        )
    return text


def from_thumbs_down(login: str, item: Learning, dropped: int | None) -> str:
    """The reply on a finding's thread once a writer's 👎 on it taught Tiebreak."""
    return f"{md.code('@' + login)} refused this finding with 👎." + learned(item, dropped)


def listing(learned: Sequence[Learning], written: int, enabled: bool) -> str:
    """`/tiebreak learnings`: the repository's learnings, most recent first."""
    if not enabled:
        head = (
            "Learning is off for this repository (`learnings.enabled` in `.github/tiebreak.yml`)."
        )
        return head + (f" It keeps {len(learned)} learnings, not applied." if learned else "")
    config = f" The config holds {written} more." if written else ""
    if not learned:
        return f"This repository has taught Tiebreak nothing yet.{config}"
    rows = [_row(item) for item in learned[:LISTED]]
    more = len(learned) - LISTED
    tail = f"\n\n…and {more} older ones." if more > 0 else ""
    return (
        f"This repository's learnings, most recent first ({len(learned)}):{config}\n\n"
        "| # | rule | files | taught by | when | thread |\n|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + tail
        + "\n\n`/tiebreak forget N` removes learning N; "
        "`tiebreak learnings export` prints them for `.github/tiebreak.yml`."
    )


def applied(learned: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """The summary's note on the learnings a review's units read (each unit's, as its agents
    read them): none when no unit read one."""
    count = len({line for unit in learned for line in unit})
    if not count:
        return ()
    return (f"_{count} of this repository's learnings applied (the transcript shows which)._",)


def forgotten(number: int) -> str:
    return f"Forgot learning #{number}: later reviews no longer read it."


def not_kept(number: int) -> str:
    return f"This repository has no learning #{number} (`/tiebreak learnings` lists them)."


def not_learned(enabled: bool) -> str:
    """The reply when `/tiebreak resolve <reason>` in a finding's thread taught nothing."""
    if not enabled:
        return "Resolved. Learning is off here, so the reason was not kept as a learning."
    return (
        f"Resolved. The reason was not kept as a learning: a learning is one rule in plain "
        f"words, one sentence or two, at most {MAX_RULE_CHARS} characters."
    )


def _row(item: Learning) -> str:
    when = f"{item.taught_at:%Y-%m-%d}" if item.taught_at else ""
    link = f"[thread]({item.thread_url})" if item.thread_url else ""
    who = md.code(item.taught_by) if item.taught_by else ""
    return (
        f"| {item.number} | {md.cell(md.inline(item.rule, RULE_LIMIT))} | "
        f"{md.cell(', '.join(md.code(g) for g in item.paths))} | {who} | {when} | {link} |"
    )


def _globs(item: Learning) -> str:
    return ", ".join(md.code(g) for g in item.paths)
