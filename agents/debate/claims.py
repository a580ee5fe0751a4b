"""The gist of a claim: the words that say which problem a finding is about.

Models word the same finding differently from one call to the next, and two testers of a
panel word it differently from each other. The gist — a claim's significant words,
lower-cased, stop words out, lightly stemmed — survives that; two claims are the same
claim when half the smaller gist is in both.
"""

import re

from agents.protocol import Finding

GIST_WORDS = 12
"""At most this many words of a claim make its gist (the longest, then in order)."""

SAME_GIST = 0.5
"""Two gists are the same claim's when this share of the smaller one is in both."""

_WORD = re.compile(r"[a-z0-9_]+")
_SUFFIXES = ("ing", "ed", "es", "s", "e")

_STOP_WORDS = """
    a about above after again all also an and any are as at be because been before being
    below between both but by can could did do does doing down during each either else
    every few for from further had has have having here how if in into is it its itself
    just may might more most must never no nor not now of off on once only or other our out
    over own same shall should since so some such than that the their them then there these
    they this those through to too under until up upon very was we were what when where
    whether which while who why will with within without would yet you your
    line lines code call calls value values function method here case cases
"""
_STOP = frozenset(_STOP_WORDS.split())
"""Words that say nothing about which problem a claim is about."""


def gist(claim: str) -> tuple[str, ...]:
    """The words of `claim` that say what is wrong: lower-cased, stop words out, stemmed."""
    words = {_stem(w) for w in _WORD.findall(claim.lower()) if w not in _STOP and len(w) > 2}
    kept = sorted(words, key=lambda w: (-len(w), w))[:GIST_WORDS]
    return tuple(sorted(w[:40] for w in kept))


def same_gist(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two gists are one claim's: half the smaller one is shared (empty gists, from
    claims of only stop words, are the same as each other and nothing else)."""
    if not a or not b:
        return not a and not b
    shared = len(set(a) & set(b))
    return shared >= SAME_GIST * min(len(set(a)), len(set(b)))


def same_finding(a: Finding, b: Finding) -> bool:
    """Whether two findings are one: same path, overlapping lines, the same claim. This is
    how a panel knows a tester raised what another already had."""
    return (
        a.path == b.path
        and a.start_line <= b.end_line
        and b.start_line <= a.end_line
        and same_gist(gist(a.claim), gist(b.claim))
    )


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
