"""A scope too large for the context's budget, shown in part rather than left out.

What is shown of it: its signature (from its first line up to its body), each changed line
with a window of lines either side, as wide as the budget allows, and in place of each run of
lines not shown a marker that numbers them (`… lines 120–180 not shown …`), so the agents know
what they do not see and where it is. Whatever the budget, the signature and the changed lines
are shown: the scope around every change reaches the agents in some form.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

MIN_WINDOW = 3
"""Lines either side of each change that a scope shown in part keeps before anything else of
lower rank gets room (fewer only when the budget cannot hold even these)."""


@dataclass(frozen=True, slots=True)
class Part:
    """Lines `first`..`last` of a file, of which `heads` (signatures) are always shown, and
    `changes` with a window of lines either side."""

    first: int
    last: int
    heads: tuple[tuple[int, int], ...]
    changes: tuple[tuple[int, int], ...]
    """Runs of changed lines, first and last of each."""

    @classmethod
    def of(
        cls, first: int, last: int, heads: Iterable[tuple[int, int]], changed: Iterable[int]
    ) -> "Part":
        """The part of lines `first`..`last` around the `changed` lines."""
        runs: list[tuple[int, int]] = []
        for line in sorted(set(changed)):
            if runs and line == runs[-1][1] + 1:
                runs[-1] = (runs[-1][0], line)
            else:
                runs.append((line, line))
        return cls(first, last, tuple(heads), tuple(runs))

    def runs(self, window: int) -> list[tuple[int, int]]:
        """The runs of lines shown with `window` lines either side of each change, in order."""
        first, last = self.first, self.last
        spans = sorted(
            [
                *self.heads,
                *((max(first, a - window), min(last, b + window)) for a, b in self.changes),
            ]
        )
        shown: list[tuple[int, int]] = []
        for a, b in spans:
            # A marker takes a line of its own: a gap of one line is shown instead.
            if shown and a <= shown[-1][1] + 2:
                shown[-1] = (shown[-1][0], max(shown[-1][1], b))
            else:
                shown.append((a, b))
        if shown[0][0] <= first + 1:
            shown[0] = (first, shown[0][1])
        if shown[-1][1] >= last - 1:
            shown[-1] = (shown[-1][0], last)
        return shown

    def widest(self, window: int) -> bool:
        """Whether `window` shows every line: no wider one shows more."""
        return self.runs(window) == [(self.first, self.last)]

    def render(self, lines: Sequence[str], window: int) -> str:
        """The lines shown of `lines` (the file's, numbered from 1), and a marker for each
        run not shown."""
        out: list[str] = []
        shown = self.first - 1
        for a, b in self.runs(window):
            if a > shown + 1:
                out.append(_marker(shown + 1, a - 1))
            out += [f"{n:>5} {lines[n - 1]}\n" for n in range(a, b + 1)]
            shown = b
        if shown < self.last:
            out.append(_marker(shown + 1, self.last))
        return "".join(out)


def widest_window(cost: Callable[[int], int], allowance: int, least: int, most: int) -> int:
    """The widest window from `least` to `most` whose `cost` is within `allowance`; `least`
    when none is (what costs more than the budget is shown at its narrowest all the same)."""
    # The cost grows with the window: a binary search renders about log2(most) windows.
    low, high = least, max(least, most)
    while low < high:
        middle = (low + high + 1) // 2
        if cost(middle) <= allowance:
            low = middle
        else:
            high = middle - 1
    return low


def _marker(first: int, last: int) -> str:
    return f"{'':>5} … lines {first}–{last} not shown …\n"
