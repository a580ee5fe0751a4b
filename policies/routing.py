"""Who speaks next: decided by the engine, never by a model.

Speakers take turns in a fixed round-robin order. When repeats are disallowed, the previous
speaker is excluded before anything else is decided, and both the preferred choice and the
fallback are drawn from the eligible speakers only, so the previous speaker can never be
chosen again by accident. This makes impossible by construction the livelock in which a
group chat's selector kept naming the excluded previous speaker and its fallback picked that
speaker again (AutoGen's SelectorGroupChat, issue 7471).
"""

from collections.abc import Sequence

from policies.errors import PolicyError


class Router:
    """Deterministic round-robin routing over a fixed set of speakers."""

    def __init__(self, speakers: Sequence[str], *, allow_repeat: bool = False) -> None:
        if not speakers or len(set(speakers)) != len(speakers):
            raise PolicyError("a router needs one or more distinct speakers")
        self.speakers = tuple(speakers)
        self.allow_repeat = allow_repeat

    def eligible(self, previous: str | None) -> tuple[str, ...]:
        """The speakers who may speak after `previous`."""
        if self.allow_repeat or len(self.speakers) == 1:
            return self.speakers
        return tuple(s for s in self.speakers if s != previous)

    def next_speaker(self, previous: str | None, preferred: str | None = None) -> str:
        """The next speaker: `preferred` if eligible, else the next eligible one in order."""
        eligible = self.eligible(previous)
        if preferred in eligible:
            return preferred
        start = self.speakers.index(previous) + 1 if previous in self.speakers else 0
        for offset in range(len(self.speakers)):
            candidate = self.speakers[(start + offset) % len(self.speakers)]
            if candidate in eligible:
                return candidate
        raise AssertionError("unreachable: a router always has an eligible speaker")
