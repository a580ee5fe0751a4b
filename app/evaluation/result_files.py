"""Where a run keeps each case's result as it finishes: `DIR/CONFIG/CASE.json`.

An interrupted run started again with the same directory skips what is there and pays only
for the rest. A failed result is kept for the record but run again: a failure measured
nothing.
"""

import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from app.evaluation.results import CaseRun, Config


class ResultFiles:
    """The results of one evaluation, one file per case and configuration."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def prepare(self) -> None:
        """Make the directory and write in it once; raise :class:`OSError` if either fails.
        A run is paid for before its result is saved: a place that cannot take it is said
        before the first call."""
        self.root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=self.root):
            pass

    def path(self, case_id: str, config: Config) -> Path:
        return self.root / config.value / f"{case_id}.json"

    def finished(self, case_id: str, config: Config) -> CaseRun | None:
        """The stored result of `case_id` under `config`, unless it is missing, unreadable
        (a write the interruption cut short) or failed."""
        try:
            run = CaseRun.model_validate_json(self.path(case_id, config).read_bytes())
        except (OSError, ValidationError):
            return None
        return None if run.failed else run

    def save(self, run: CaseRun) -> None:
        """Write `run` whole or not at all: a temporary file renamed over the result."""
        path = self.path(run.case_id, run.config)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.write_text(run.model_dump_json(indent=2), encoding="utf-8")
        os.replace(partial, path)
