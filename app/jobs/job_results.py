"""How a job ended, and what it has to say: what every job returns, what the worker counts
(`tiebreak_jobs_total`, :mod:`app.jobs.worker`) and what arq keeps as the job's result.

arq keeps the result as plain text (`str(result)`: the text, a failure's after `failed: `),
so that whatever reads it (`all_job_results()`, an operator at redis-cli) needs none of
Tiebreak's classes, and a result kept before an upgrade reads the same after it.
"""

from dataclasses import dataclass
from enum import StrEnum


class Ending(StrEnum):
    """How a run of a job ended, as `tiebreak_jobs_total` labels it."""

    COMPLETED = "completed"
    FAILED = "failed"
    """It caught its own failure (the review and unit jobs catch everything, so that the pull
    request gets an answer), or raised."""
    CANCELLED = "cancelled"
    """Aborted, timed out, or stopped by a shutdown (after which arq runs it again)."""


@dataclass(frozen=True, slots=True)
class JobResult:
    """What a job that returned says: how it ended, and its text."""

    ended: Ending
    text: str

    @classmethod
    def completed(cls, text: str) -> "JobResult":
        return cls(Ending.COMPLETED, text)

    @classmethod
    def failed(cls, reason: str) -> "JobResult":
        return cls(Ending.FAILED, reason)

    def __str__(self) -> str:
        """The result as arq keeps it."""
        return f"failed: {self.text}" if self.ended is Ending.FAILED else self.text
