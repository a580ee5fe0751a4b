"""Errors of `tiebreak eval`, rooted in :class:`policies.errors.TiebreakError`.

EvaluationError
├── CasesError      a cases file cannot be read as cases
└── HistoryError    git could not answer about the repository cases are built from
"""

from policies.errors import TiebreakError


class EvaluationError(TiebreakError):
    """An error of the evaluation."""


class CasesError(EvaluationError):
    """A cases file is malformed: not JSON lines, or a line is not a case."""


class HistoryError(EvaluationError):
    """A git command about the repository failed."""
