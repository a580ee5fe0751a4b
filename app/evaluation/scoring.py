"""Scoring: which posted findings hit a labelled bug, and each configuration's figures.

A posted finding hits a labelled bug when it is on the bug's path and its lines overlap the
bug's lines widened by `tolerance` on each side. A buggy case is caught when a posted
finding hits any of its labelled locations. Precision counts posted findings on buggy cases
only, and is a lower bound: a finding on an unlabelled line may point at a real bug. Every
finding posted on a clean case is a false alarm (as far as anyone knows).

With the findings' tests run (`tiebreak eval --verify`), precision is also taken apart: that
of the posted findings whose test reproduced the bug at the case's commit, that of those whose
test proved it in code the commit adds, and that of the others (untested, or whose test showed
nothing) — each only from `MIN_FINDINGS` findings up.

Intervals are 95% percentile bootstraps over cases, seeded: the same results give the same
intervals.
"""

import functools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from app.evaluation import DEFAULT_TOLERANCE as DEFAULT_TOLERANCE
from app.evaluation.cases import Case, Location
from app.evaluation.results import CaseRun, Config, Posted

RESAMPLES = 2_000
SEED = 20_240_601
MIN_FINDINGS = 5
"""Posted findings on buggy cases a precision of the reproduced ones (or of the others) needs:
from fewer, a share says more of chance than of the findings, and none is given."""


def hits(posted: Posted, bug: Location, tolerance: int = DEFAULT_TOLERANCE) -> bool:
    """Whether `posted` lands on `bug`: same path, lines within `tolerance` of a bug line."""
    return posted.path == bug.path and any(
        posted.start_line - tolerance <= line <= posted.end_line + tolerance for line in bug.lines
    )


@dataclass(frozen=True, slots=True)
class CaseScore:
    """One configuration's run on one case, scored."""

    case: Case
    run: CaseRun
    hit: tuple[bool, ...]
    """Whether each posted finding hits a labelled bug."""

    @property
    def hits(self) -> int:
        """Posted findings that hit a labelled bug."""
        return sum(self.hit)

    @property
    def caught(self) -> bool:
        return self.hits > 0

    @property
    def false_alarms(self) -> int:
        """Posted findings on a clean case (none are counted on a buggy one)."""
        return 0 if self.case.buggy else len(self.run.posted)


def score(case: Case, run: CaseRun, tolerance: int = DEFAULT_TOLERANCE) -> CaseScore:
    hit = tuple(any(hits(p, bug, tolerance) for bug in case.bug) for p in run.posted)
    return CaseScore(case, run, hit)


@dataclass(frozen=True, slots=True)
class Estimate:
    """A figure with its 95% interval (None when there is nothing to measure it on)."""

    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True, slots=True)
class Summary:
    """One configuration's figures over the cases it was measured on."""

    config: Config
    cases: int
    """Cases measured (failed ones left out)."""
    failed: int
    recall: Estimate
    precision: Estimate
    recall_by_context: Mapping[bool, Estimate]
    """Recall of the cases whose bug needs context beyond the hunks (True), and the rest."""
    false_alarms_per_clean_case: float | None
    billed_tokens_per_case: float | None
    calls_per_case: float | None
    seconds_per_case: float | None
    verify: bool = False
    """Whether the findings' tests were to run, on any case measured."""
    tested: int = 0
    """Posted findings whose test ran, on every case measured."""
    reproduced: int = 0
    """Posted findings whose test reproduced the bug (failed at the commit, passed at its
    base)."""
    reproduced_precision: Estimate = Estimate(None)
    """Precision of the reproduced posted findings on buggy cases (None below
    `MIN_FINDINGS`)."""
    other_precision: Estimate = Estimate(None)
    """Precision of the other posted findings on buggy cases, neither reproduced nor proven in
    new code (None below `MIN_FINDINGS`)."""
    reproduced_on_buggy_cases: int = 0
    other_on_buggy_cases: int = 0
    introduced: int = 0
    """Posted findings whose test proved the bug in code the commit adds (failed at the
    commit, and at its base only for the want of that code)."""
    introduced_precision: Estimate = Estimate(None)
    """Precision of the posted findings proven in new code on buggy cases (None below
    `MIN_FINDINGS`)."""
    introduced_on_buggy_cases: int = 0
    intended: int = 0
    """Posted findings whose test proved a behaviour change the debate found intended: posted
    as behaviour changes, not defects (counted apart from the reproduced and new code)."""
    intended_precision: Estimate = Estimate(None)
    """Precision of the intended changes posted on buggy cases: the share that is not on the
    labelled bug, which a behaviour change called intended would have waved through (None
    below `MIN_FINDINGS`)."""
    intended_on_buggy_cases: int = 0


def summarize(config: Config, scores: Sequence[CaseScore]) -> Summary:
    """The figures of `config` over its scored runs (failed runs counted apart)."""
    measured = [s for s in scores if not s.run.failed]
    buggy = [s for s in measured if s.case.buggy]
    clean = [s for s in measured if not s.case.buggy]
    return Summary(
        config=config,
        cases=len(measured),
        failed=len(scores) - len(measured),
        recall=_estimate(buggy, _recall),
        precision=_estimate(buggy, _precision),
        recall_by_context={
            needs: Estimate(_recall([s for s in buggy if s.case.needs_context is needs]))
            for needs in (True, False)
        },
        false_alarms_per_clean_case=_mean([s.false_alarms for s in clean]),
        billed_tokens_per_case=_mean([s.run.billed_tokens for s in measured]),
        calls_per_case=_mean([s.run.calls for s in measured]),
        seconds_per_case=_mean([s.run.seconds for s in measured]),
        verify=any(s.run.verify for s in measured),
        tested=sum(p.tested for s in measured for p in s.run.posted),
        reproduced=_posted(measured, _reproduced),
        reproduced_precision=_precision_among(buggy, _reproduced),
        other_precision=_precision_among(buggy, _other),
        reproduced_on_buggy_cases=_posted(buggy, _reproduced),
        other_on_buggy_cases=_posted(buggy, _other),
        introduced=_posted(measured, _introduced),
        introduced_precision=_precision_among(buggy, _introduced),
        introduced_on_buggy_cases=_posted(buggy, _introduced),
        intended=_posted(measured, _intended),
        intended_precision=_intended_precision(buggy),
        intended_on_buggy_cases=_posted(buggy, _intended),
    )


Statistic = Callable[[Sequence[CaseScore]], float | None]


def _recall(buggy: Sequence[CaseScore]) -> float | None:
    return sum(s.caught for s in buggy) / len(buggy) if buggy else None


def _precision(
    buggy: Sequence[CaseScore], which: Callable[[Posted], bool] = lambda posted: True
) -> float | None:
    """The share of the posted findings `which` picks on `buggy` cases that hit a bug."""
    hit = [h for s in buggy for p, h in zip(s.run.posted, s.hit, strict=True) if which(p)]
    return sum(hit) / len(hit) if hit else None


def _precision_among(buggy: Sequence[CaseScore], which: Callable[[Posted], bool]) -> Estimate:
    if _posted(buggy, which) < MIN_FINDINGS:
        return Estimate(None)
    return _estimate(buggy, functools.partial(_precision, which=which))


def _posted(scores: Sequence[CaseScore], which: Callable[[Posted], bool]) -> int:
    return sum(1 for s in scores for p in s.run.posted if which(p))


def _intended_precision(buggy: Sequence[CaseScore]) -> Estimate:
    """The share of the intended changes on `buggy` cases that miss the labelled bug."""
    if _posted(buggy, _intended) < MIN_FINDINGS:
        return Estimate(None)

    def missed(scores: Sequence[CaseScore]) -> float | None:
        hit = [h for s in scores for p, h in zip(s.run.posted, s.hit, strict=True) if p.intended]
        return 1 - sum(hit) / len(hit) if hit else None

    return _estimate(buggy, missed)


def _reproduced(posted: Posted) -> bool:
    return posted.reproduced and not posted.intended


def _introduced(posted: Posted) -> bool:
    return posted.introduced and not posted.intended


def _intended(posted: Posted) -> bool:
    return posted.intended


def _other(posted: Posted) -> bool:
    return not (posted.reproduced or posted.introduced or posted.intended)


def _estimate(scores: Sequence[CaseScore], statistic: Statistic) -> Estimate:
    value = statistic(scores)
    if value is None:
        return Estimate(None)
    rng = random.Random(SEED)
    draws = sorted(
        v
        for _ in range(RESAMPLES)
        if (v := statistic(rng.choices(scores, k=len(scores)))) is not None
    )
    last = len(draws) - 1
    return Estimate(value, draws[round(0.025 * last)], draws[round(0.975 * last)])


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
