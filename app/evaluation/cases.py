"""The evaluation's cases: commits labelled with where a later fix found the bug.

A buggy case is the diff of a commit that introduced a bug a later commit fixed, labelled
with the new-side lines that fix changed; a clean case is a commit none of whose lines a
later fix changed (`bug` empty: "no known fix", not "bug-free"). Cases are JSON lines.
"""

import json
from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from app.evaluation.errors import CasesError

OBJECT_ID = r"[0-9a-f]{40}|[0-9a-f]{64}"
"""A full commit id: SHA-1, or SHA-256 in a repository made with `--object-format=sha256`."""
CommitId = Annotated[str, StringConstraints(pattern=rf"^(?:{OBJECT_ID})$")]
"""Hex digits and nothing else: given to git, it can never be read as an option or a range."""

CaseId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
"""Safe as a file name: each case's result is stored under its id."""


class Location(BaseModel):
    """Lines of one path, new-side line numbers of the case's diff."""

    model_config = ConfigDict(frozen=True)

    path: str
    lines: tuple[Annotated[int, Field(ge=1)], ...] = Field(min_length=1)


class Case(BaseModel):
    """One commit to review, and where (if anywhere) its known bug is."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: CaseId
    repo: str
    license: str = ""
    introducing_commit: str
    base_commit: CommitId | None = None
    """The introducing commit's first parent, the side its diff is against: the findings'
    tests run there and at the introducing commit (`tiebreak eval --verify`). None in cases
    built before it was kept: their tests cannot run."""
    fix_commit: str | None = None
    diff: str
    bug: tuple[Location, ...] = ()
    bug_summary: str | None = None
    needs_context: bool = False
    """The bug cannot be seen from the diff's hunks alone."""
    files: dict[str, str] = {}
    """The full text, at the commit, of the files the diff touches."""

    @property
    def buggy(self) -> bool:
        return bool(self.bug)


def parse_cases(lines: Iterable[str]) -> list[Case]:
    """The cases of a JSON-lines text (blank lines skipped). Raise :class:`CasesError` naming
    the first bad line, or a repeated id."""
    cases: list[Case] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = Case.model_validate(json.loads(line))
        except (ValueError, ValidationError) as exc:
            reason = str(exc).splitlines()[0]
            raise CasesError(f"line {number} is not a case: {reason}") from exc
        if case.id in seen:
            raise CasesError(f"line {number}: case id {case.id} appears twice")
        seen.add(case.id)
        cases.append(case)
    return cases


def dump_case(case: Case) -> str:
    """One case as a JSON line."""
    return case.model_dump_json(exclude_none=True)
