"""What one configuration of Tiebreak posted on one case, and what it cost.

Stored as it is (not scored), so a finished run can be scored again — with another
tolerance, say — without paying for a model call.
"""

from pydantic import BaseModel, ConfigDict

from agents.protocol import Severity
from agents.verification import Evidence
from app.evaluation import Config as Config


class Posted(BaseModel):
    """A finding a configuration posted."""

    model_config = ConfigDict(frozen=True)

    path: str
    start_line: int
    end_line: int
    severity: Severity
    claim: str
    verdict: Evidence | None = None
    """What the finding's test showed at the case's base and introducing commits
    (`tiebreak eval --verify`); None when it was not tested: no verification, or no test."""
    verdict_reason: str = ""
    """In words, what the runs showed, or why none ran."""
    fix_verified: bool | None = None
    """Whether the finding's test passes with the fix a debate agreed (None: not checked)."""
    relevant: bool | None = None
    """False when its test was ruled not to test its claim: its runs prove nothing
    (`agents.debate.relevance`)."""
    intended: bool = False
    """Whether it was posted as a behaviour change the pull request means: its test proved
    the change, and the debate found it intended (`agents.debate.intent_rules`)."""

    @property
    def tested(self) -> bool:
        """Whether a test of the finding was run."""
        return self.verdict not in (None, Evidence.NOT_RUN)

    @property
    def reproduced(self) -> bool:
        return self.verdict is Evidence.REPRODUCED and self.relevant is not False

    @property
    def introduced(self) -> bool:
        """Whether its test proved the bug in code the case's commit adds."""
        return self.verdict is Evidence.INTRODUCED and self.relevant is not False


class CaseRun(BaseModel):
    """One configuration on one case. A run with an `error` was not measured: it is
    reported as failed, never as a miss."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    config: Config
    posted: tuple[Posted, ...] = ()
    billed_tokens: int = 0
    calls: int = 0
    seconds: float = 0.0
    error: str | None = None
    verify: bool = False
    """Whether the findings' tests were to be run (`tiebreak eval --verify`)."""
    unverified: str | None = None
    """Why, with `verify`, the case's tests could not run: its findings are then `not_run`."""

    @property
    def failed(self) -> bool:
        return self.error is not None
