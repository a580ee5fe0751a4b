"""Cases built from a repository's own history with git, by the SZZ method (`szz`).

Every fix commit's changed lines are blamed, so that no commit any fix traced a bug to can
be taken for a clean one; buggy cases are the newest fixes' introducing commits, clean cases
commits of the same kind spread over the history.
"""

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.diff import Diff
from agents.errors import DiffError
from app.evaluation.cases import Case, Location
from app.evaluation.errors import HistoryError
from app.evaluation.szz import (
    Blamed,
    fixed_lines,
    introducing,
    is_fix,
    is_source,
    object_id,
    parse_blame,
    ranges,
    size,
)

# One record a commit, ended by a NUL (`-z`): ids first, which git writes, then the subject,
# the only text an author chose. A subject holds no newline (git joins its first paragraph
# with spaces) and stops at a NUL, so it can neither end its record nor start another.
_LOG_FORMAT = "--format=%H %P%n%s"
# Nothing after it is an option, whatever it starts with (git >= 2.24).
_END = "--end-of-options"


@dataclass(frozen=True, slots=True)
class Mining:
    """Where the cases come from and which commits qualify."""

    repo: Path
    name: str
    license: str = ""
    max_cases: int = 50
    clean: int = 10
    max_files: int = 5
    max_lines: int = 200
    suffixes: Sequence[str] = (".py",)


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    subject: str


class Git:
    """git, run in one repository."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.repo), *args], capture_output=True, check=False
        )
        if done.returncode:
            reason = done.stderr.decode(errors="replace").strip().splitlines()
            raise HistoryError(f"git {args[0]}: {reason[0] if reason else done.returncode}")
        return done.stdout.decode("utf-8", errors="replace")

    def commits(self) -> list[Commit]:
        """Every commit reachable from HEAD, newest first."""
        text = self("log", "-z", _LOG_FORMAT, _END, "HEAD")
        commits = []
        for record in text.split("\0"):
            if record:
                ids, _, subject = record.partition("\n")
                sha, *parents = ids.split()
                commits.append(
                    Commit(object_id(sha), tuple(object_id(p) for p in parents), subject)
                )
        return commits


def mine_cases(mining: Mining) -> list[Case]:
    """Buggy cases, newest fixes first, then clean cases."""
    git = Git(mining.repo)
    commits = git.commits()
    by_sha = {c.sha: c for c in commits}
    traced: set[str] = set()
    buggy: list[Case] = []
    for fix in (c for c in commits if is_fix(c.subject) and len(c.parents) == 1):
        blamed = _blame_fix(git, fix, mining.suffixes)
        traced.update(b.commit for b in blamed)
        found = introducing(blamed)
        if found is None or len(buggy) >= mining.max_cases:
            continue
        sha, labels = found
        origin = by_sha.get(sha)
        if origin is None or any(c.introducing_commit == sha for c in buggy):
            continue
        case = _case(git, mining, origin, labels, fix)
        if case is not None:
            buggy.append(case)
    candidates = [
        c for c in commits if c.sha not in traced and not is_fix(c.subject) and len(c.parents) == 1
    ]
    return buggy + _clean(git, mining, candidates)


def _blame_fix(git: Git, fix: Commit, suffixes: Sequence[str]) -> list[Blamed]:
    parent = fix.parents[0]
    diff = git("diff", "--no-color", "--no-ext-diff", "-U0", _END, parent, fix.sha)
    blamed: list[Blamed] = []
    for path, lines in fixed_lines(diff, suffixes).items():
        spans = [arg for start, end in ranges(lines) for arg in ("-L", f"{start},{end}")]
        # git blame (2.39 among others) refuses `--end-of-options`; `parent` is a full id, all
        # hex, so it cannot be read as an option.
        blamed += parse_blame(git("blame", "--line-porcelain", *spans, parent, "--", path))
    return blamed


def _clean(git: Git, mining: Mining, candidates: Sequence[Commit]) -> list[Case]:
    """Up to `mining.clean` qualifying commits, spread evenly over the history."""
    chosen: list[Case] = []
    if not mining.clean:
        return chosen
    step = max(1, len(candidates) // (mining.clean * 2))
    for commit in candidates[::step]:
        case = _case(git, mining, commit, [], None)
        if case is not None:
            chosen.append(case)
            if len(chosen) == mining.clean:
                break
    return chosen


def _case(
    git: Git, mining: Mining, commit: Commit, labels: list[Location], fix: Commit | None
) -> Case | None:
    """The case of `commit`, or None if it does not qualify: too large, no source file, or a
    label off its diff's new side."""
    text = git("show", "--no-color", "--no-ext-diff", "--format=", "-U3", _END, commit.sha)
    if not text.strip():
        return None
    files, lines = size(text)
    if files > mining.max_files or lines > mining.max_lines:
        return None
    try:
        diff = Diff.parse(text)
    except DiffError:
        return None
    sources = [
        f.path
        for f in diff.files
        if not f.deleted and not f.binary and f.path.endswith(tuple(mining.suffixes))
    ]
    if not sources or not all(is_source(loc.path, mining.suffixes) for loc in labels):
        return None
    for loc in labels:
        diff_file = diff.file(loc.path)
        if diff_file is None or not set(loc.lines) <= diff_file.right_lines():
            return None
    name = re.sub(r"[^A-Za-z0-9._-]", "-", mining.name).strip("-._") or "repo"
    kind = "bug" if labels else "clean"
    return Case(
        id=f"{name}-{kind}-{commit.sha[:8]}",
        repo=mining.name,
        license=mining.license,
        introducing_commit=commit.sha,
        base_commit=commit.parents[0] if commit.parents else None,
        fix_commit=fix.sha if fix else None,
        diff=text,
        bug=tuple(labels),
        bug_summary=f"Fixed by {fix.sha[:8]}: {fix.subject}" if fix else "",
        files={p: git("show", _END, f"{commit.sha}:{p}") for p in sources},
    )
