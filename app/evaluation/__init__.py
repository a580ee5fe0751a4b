"""`tiebreak eval`: Tiebreak measured on real bugs, against one reviewer and a vote.

The cases and the scoring are pure (`cases`, `results`, `voting`, `scoring`, `report`); the
runner drives the engine over them (`case_runner`, `result_files`); `szz` and `history` build
cases from a repository's own git history.

Here, with nothing imported, what `tiebreak eval`'s help shows: the configurations compared and
the tolerance of a hit.
"""

from enum import StrEnum

DEFAULT_TOLERANCE = 3
"""Lines either side of a labelled bug a finding may land on and still hit it."""


class Config(StrEnum):
    """A way of reviewing a diff, compared on the same model."""

    SINGLE = "single"
    """One tester's report, every finding posted: a one-pass reviewer."""
    VOTE = "vote"
    """Three independent tester reports; a finding posted when two or more raise it."""
    TRIO = "trio"
    """The default debate of a tester, a coder and an arbiter."""
    PANEL = "panel"
    """Three testers in a ring, a finding settled by their majority."""
