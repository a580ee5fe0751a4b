"""The evaluation's answer: a table for the terminal, or one JSON document.

Pure: given the cases, the runs and the tolerance, the same text every time.
"""

from collections.abc import Sequence
from typing import Any

from app.evaluation.cases import Case
from app.evaluation.results import CaseRun, Config
from app.evaluation.scoring import CaseScore, Estimate, Summary, score, summarize


def scores_by_config(
    cases: Sequence[Case], runs: Sequence[CaseRun], tolerance: int
) -> dict[Config, list[CaseScore]]:
    """Each configuration's runs scored, in the order of `cases`."""
    by_id = {c.id: c for c in cases}
    order = {c.id: i for i, c in enumerate(cases)}
    scored: dict[Config, list[CaseScore]] = {}
    for run in sorted(runs, key=lambda r: order[r.case_id]):
        scored.setdefault(run.config, []).append(score(by_id[run.case_id], run, tolerance))
    return scored


def summaries(cases: Sequence[Case], runs: Sequence[CaseRun], tolerance: int) -> list[Summary]:
    scored = scores_by_config(cases, runs, tolerance)
    return [summarize(config, scored[config]) for config in Config if config in scored]


def document(cases: Sequence[Case], runs: Sequence[CaseRun], tolerance: int) -> dict[str, Any]:
    """`{"configs": {NAME: figures}, "cases": [one entry per case and configuration]}`."""
    scored = scores_by_config(cases, runs, tolerance)
    return {
        "tolerance": tolerance,
        "configs": {s.config.value: _figures(s) for s in summaries(cases, runs, tolerance)},
        "cases": [
            {
                "id": s.case.id,
                "config": s.run.config.value,
                "buggy": s.case.buggy,
                "needs_context": s.case.needs_context,
                "posted": [p.model_dump(mode="json") for p in s.run.posted],
                "hits": s.hits,
                "caught": s.caught if s.case.buggy and not s.run.failed else None,
                "false_alarms": s.false_alarms,
                "billed_tokens": s.run.billed_tokens,
                "calls": s.run.calls,
                "seconds": round(s.run.seconds, 3),
                "error": s.run.error,
                "unverified": s.run.unverified,
            }
            for config in Config
            for s in scored.get(config, [])
        ],
    }


def _figures(summary: Summary) -> dict[str, Any]:
    return {
        "recall": summary.recall.value,
        "recall_interval": _interval(summary.recall),
        "recall_by_needs_context": {
            str(needs).lower(): estimate.value
            for needs, estimate in summary.recall_by_context.items()
        },
        "precision": summary.precision.value,
        "precision_interval": _interval(summary.precision),
        "false_alarms_per_clean_case": summary.false_alarms_per_clean_case,
        "billed_tokens_per_case": summary.billed_tokens_per_case,
        "calls_per_case": summary.calls_per_case,
        "seconds_per_case": summary.seconds_per_case,
        "cases": summary.cases,
        "failed": summary.failed,
        "tested": summary.tested,
        "reproduced": summary.reproduced,
        "reproduced_precision": summary.reproduced_precision.value,
        "reproduced_precision_interval": _interval(summary.reproduced_precision),
        "reproduced_on_buggy_cases": summary.reproduced_on_buggy_cases,
        "introduced": summary.introduced,
        "introduced_precision": summary.introduced_precision.value,
        "introduced_precision_interval": _interval(summary.introduced_precision),
        "introduced_on_buggy_cases": summary.introduced_on_buggy_cases,
        "intended": summary.intended,
        "intended_precision": summary.intended_precision.value,
        "intended_precision_interval": _interval(summary.intended_precision),
        "intended_on_buggy_cases": summary.intended_on_buggy_cases,
        "other_precision": summary.other_precision.value,
        "other_precision_interval": _interval(summary.other_precision),
        "other_on_buggy_cases": summary.other_on_buggy_cases,
    }


def _interval(estimate: Estimate) -> list[float] | None:
    if estimate.low is None or estimate.high is None:
        return None
    return [estimate.low, estimate.high]


_HEADERS = (
    "config",
    "recall [95% CI]",
    "precision [95% CI]",
    "recall ctx/no ctx",
    "false alarms/clean",
    "tokens/case",
    "calls/case",
    "s/case",
    "cases",
    "failed",
)
_TESTS_HEADERS = (
    "tested/reproduced/new code/intended",
    "precision reproduced",
    "precision new code",
    "precision intended",
    "precision other",
)
TOO_FEW = "—"
"""Where a precision of the proven findings, or of the others, stands on too few."""


def table(summaries: Sequence[Summary]) -> str:
    """The configurations side by side, one row each, columns aligned; with the findings'
    tests, their counts and precisions too."""
    tests = any(s.verify for s in summaries)
    headers = _HEADERS + (_TESTS_HEADERS if tests else ())
    rows = [headers] + [_row(s) + (_tests_row(s) if tests else ()) for s in summaries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _row(s: Summary) -> tuple[str, ...]:
    return (
        s.config.value,
        _ratio(s.recall),
        _ratio(s.precision),
        f"{_share(s.recall_by_context[True].value)}/{_share(s.recall_by_context[False].value)}",
        _number(s.false_alarms_per_clean_case, 2),
        _number(s.billed_tokens_per_case, 0),
        _number(s.calls_per_case, 1),
        _number(s.seconds_per_case, 1),
        str(s.cases),
        str(s.failed),
    )


def _tests_row(s: Summary) -> tuple[str, ...]:
    return (
        f"{s.tested}/{s.reproduced}/{s.introduced}/{s.intended}",
        _ratio(s.reproduced_precision, TOO_FEW),
        _ratio(s.introduced_precision, TOO_FEW),
        _ratio(s.intended_precision, TOO_FEW),
        _ratio(s.other_precision, TOO_FEW),
    )


def _ratio(estimate: Estimate, missing: str = "-") -> str:
    if estimate.value is None:
        return missing
    if estimate.low is None or estimate.high is None:
        return _share(estimate.value)
    return f"{_share(estimate.value)} [{_share(estimate.low)}-{_share(estimate.high)}]"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"
