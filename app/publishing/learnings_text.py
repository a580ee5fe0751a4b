"""What Tiebreak says about learnings: when it learns one (for the repository, or for a pull
request alone when who taught it may not write), `/tiebreak learnings` and `/tiebreak forget`.
Pure, no I/O.

A learned rule is model text (the tester wrote it from a thread): it goes through
:func:`app.publishing.markdown.inline` wherever it is shown. Globs and logins are shown as code.
"""

from collections.abc import Iterable, Sequence

from app.publishing import markdown as md
from policies.learnings import MAX_LEARNINGS, MAX_PULL_LEARNINGS, MAX_RULE_CHARS, Learning

LISTED = 30
"""Learnings `/tiebreak learnings` lists in one comment; a count says how many more there are."""
RULE_LIMIT = 320


def learned(item: Learning, dropped: int | None) -> str:
    """The paragraph a reply adds when the thread taught Tiebreak something; `dropped`, the
    oldest learning it pushed out."""
    rule = md.inline(item.rule, RULE_LIMIT)
    forget = f"`/tiebreak forget {item.number}` removes it."
    if item.pull is not None:
        text = (
            f"\n\nLearned for this pull request alone: {rule} Its later reviews read it, for "
            f"{_globs(item)}; {md.code('@' + item.taught_by)} may not write to this "
            "repository, so its other pull requests do not. A writer who agrees can add it to "
            f"`learnings` in `.github/tiebreak.yml`. {forget}"
        )
        kept = f"This pull request keeps {MAX_PULL_LEARNINGS} learnings of its own"
    else:
        text = (
            f"\n\nLearned {item.label} for {_globs(item)}: {rule} "
            f"Later reviews of these files read it; {forget}"
        )
        kept = f"This repository keeps {MAX_LEARNINGS} learnings"
    if dropped is not None:
        text += f" {kept}: the oldest, #{dropped}, was dropped."
    return text


def from_thumbs_down(login: str, item: Learning, dropped: int | None) -> str:
    """The reply on a finding's thread once a writer's 👎 on it taught Tiebreak."""
    return f"{md.code('@' + login)} refused this finding with 👎." + learned(item, dropped)


def listing(
    learned: Sequence[Learning], own: Sequence[Learning], written: int, enabled: bool
) -> str:
    """`/tiebreak learnings`: the repository's learnings, most recent first, then those the
    pull request it is asked on keeps for itself alone."""
    if not enabled:
        head = (
            "Learning is off for this repository (`learnings.enabled` in `.github/tiebreak.yml`)."
        )
        return head + (f" It keeps {len(learned)} learnings, not applied." if learned else "")
    config = f" The config holds {written} more." if written else ""
    if not learned:
        text = f"This repository has taught Tiebreak nothing yet.{config}"
    else:
        more = len(learned) - LISTED
        text = (
            f"This repository's learnings, most recent first ({len(learned)}):{config}\n\n"
            + _table(learned[:LISTED])
            + (f"\n\n…and {more} older ones." if more > 0 else "")
        )
    if own:
        text += (
            f"\n\nThis pull request's own ({len(own)}), taught by people who may not write to "
            "this repository: its reviews alone read them.\n\n" + _table(own[:LISTED])
        )
    if not learned and not own:
        return text
    return text + (
        "\n\n`/tiebreak forget N` removes learning N; "
        "`tiebreak learnings export` prints the repository's for `.github/tiebreak.yml`."
    )


def _table(items: Sequence[Learning]) -> str:
    return (
        "| # | rule | files | taught by | when | thread |\n|---|---|---|---|---|---|\n"
        + "\n".join(_row(item) for item in items)
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
