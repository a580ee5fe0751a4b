"""What a pull request says it does — its author's statement of intent — as its agents read it.

A pull request's title and description say what the change means to do; for `tiebreak review`
of a diff, the description given with it, or the messages of its commits. The tester reads
them to know what the change means to do (a deliberate change of behaviour is not a bug
because behaviour changed), the coder may cite them, the arbiter weighs them: as the author's
claim, never as proof (`agents.debate.prompts`). Whoever opened the pull request wrote them,
so they are untrusted like the diff: fenced as data in the prefix every call of a unit reads
first (`agents.debate.briefs`), with no control character (no escape sequence, bidi override
or zero-width character that would make what a person reads of them differ from what the
agents read), and bounded, cut with a marker that says how much was left out. The text is
made once per review, the same for every unit and every call of it.
"""

import re
import unicodedata
from collections.abc import Iterable

MAX_INTENT_CHARS = 6_000
"""Characters of an intent the agents read, some 1,500 tokens: a description written for
people (GitHub's template, a list of changes, the reasons) fits whole; what is past it (a
pasted log, a description of 65,000 characters) is cut."""

_BREAKS = re.compile(r"\r\n|[\r\v\f\x85\u2028\u2029]")
"""What ends a line besides a newline: each is one."""
_KEPT = frozenset("\n\t")
_INERT = frozenset({"Cc", "Cf", "Cs"})
"""Unicode's controls, format characters and surrogates."""


def pull_intent(title: str, body: str) -> str:
    """A pull request's title, then its description; empty when it says nothing."""
    return _bounded("\n\n".join(part for part in (_clean(title), _clean(body)) if part))


def commits_intent(messages: Iterable[str]) -> str:
    """Commits' messages, in the order given (oldest first), each whole; empty for none."""
    return _bounded("\n\n".join(text for message in messages if (text := _clean(message))))


def given_intent(text: str) -> str:
    """A description given as it is, for a diff."""
    return _bounded(_clean(text))


def _clean(text: str) -> str:
    """`text` without control, format or surrogate characters, each line break a newline,
    tabs kept, and without the blank space around it."""
    text = _BREAKS.sub("\n", text)
    return "".join(c for c in text if c in _KEPT or unicodedata.category(c) not in _INERT).strip()


def _bounded(text: str) -> str:
    """`text` up to :data:`MAX_INTENT_CHARS`, the rest cut and counted."""
    if len(text) <= MAX_INTENT_CHARS:
        return text
    cut = len(text) - MAX_INTENT_CHARS
    return text[:MAX_INTENT_CHARS] + f"\n[… cut: {cut:,} more characters]"
