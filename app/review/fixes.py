"""`/tiebreak apply`: the latest run's fixes as one commit on the pull request's head branch.

Every fixed finding of the run (agreed by the agents, or forced by the arbiter) carries a
patch: the full new text of some new-file lines of the reviewed head. They are applied to the
files at that head, all or nothing, and committed through the Git Data API (blobs, a tree, a
commit, a fast-forward of the branch). The commit names no author, so GitHub attributes it to
the App. Nothing is ever force-pushed: whatever stands in the way — a head that moved since
the review, a fork that does not let maintainers edit it or that was deleted, a patch whose
lines changed — is refused with a reason a person can read in a reply. A head repository
GitHub no longer names is never taken for the base repository, whose branch of the same name
would otherwise take the fixes.
"""

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from agents.diff import Diff
from agents.outcome import FindingOutcome, Resolution
from agents.patches import PatchesOverlap, StaleLines, apply_patches, current_lines
from agents.protocol import Patch, Severity
from app.github.errors import BranchMoved, NotWritable
from app.github.git_data import pushable
from app.github.installation_client import InstallationClient
from app.github.models import GitFile, PullRequest
from app.publishing import markdown as md
from app.publishing.finding_text import location
from app.publishing.publication import RunRecord, finding_key
from policies.errors import TiebreakError
from policies.safety import ProtectedPaths

SUBJECT = "Apply Tiebreak's fixes"
MAX_CLAIM = 120
"""Characters of a finding's claim in the commit message."""

_REFERENCE = re.compile(r"([#@])(?=[A-Za-z0-9])")


class ApplyRefused(TiebreakError):
    """The fixes were not applied; `reason` says why: Markdown to post as is in a reply."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AppliedFix(BaseModel):
    """One finding the commit fixes."""

    model_config = ConfigDict(frozen=True)

    label: str
    """The finding's id, qualified by its unit when the review has several (as published)."""
    severity: Severity
    claim: str
    location: str
    """Where its patch applies: `path:line` or `path:start-end`."""


class AppliedCommit(BaseModel):
    """The commit `/tiebreak apply` pushed."""

    model_config = ConfigDict(frozen=True)

    sha: str
    repo: str
    """The repository of the head branch: a fork's for a pull request from a fork."""
    branch: str
    fixes: tuple[AppliedFix, ...]
    files: tuple[str, ...]

    @property
    def finding_ids(self) -> tuple[str, ...]:
        """The labels of the findings the commit fixes, in the review's order."""
        return tuple(fix.label for fix in self.fixes)


def patched_files(record: RunRecord, files: Mapping[str, str]) -> dict[str, str]:
    """The new text of every file the run's fixes change, from `files` (path → text at the
    reviewed head, for at least the paths the fixes touch); unchanged files are left out.

    Raise :class:`ApplyRefused` if a patch is on a protected path (by today's rules: a run
    recorded under older ones gets no exception), if its lines at the head are not the lines
    it was agreed to replace (as its finding records them; for a run recorded before they
    were, as the run's diff shows them), or if two patches of one file overlap.
    """
    diff = Diff.parse(record.diff, allow_empty=True)
    protected = ProtectedPaths(record.policy.protected_paths)
    by_path: dict[str, list[tuple[str, Patch]]] = {}
    for label, result, patch in _fixed(record):
        if (reason := protected.forbids(patch.path)) is not None:
            raise ApplyRefused(
                f"The fix for {_label(label)} at {_where(patch)} is refused: "
                f"{md.inline(reason, 300)}. Tiebreak never commits there."
            )
        # The head is checked against the run's diff below; the diff, here, against what the
        # fix was agreed to replace, which an earlier head's diff may have shown.
        if result.replaces is not None and current_lines(diff, patch) != result.replaces:
            raise ApplyRefused(
                f"The fix for {_label(label)} at {_where(patch)} no longer applies: it was "
                "agreed on lines that read otherwise there, which a push has moved or changed "
                "since."
            )
        by_path.setdefault(patch.path, []).append((label, patch))
    changed = {}
    for path, patches in by_path.items():
        text = files.get(path)
        if text is None:
            label, patch = patches[0]
            raise ApplyRefused(
                f"The fix for {_label(label)} at {_where(patch)} no longer applies: "
                f"{md.code(path)} is not a file at the head."
            )
        new = _patch_file(text, patches, diff)
        if new != text:
            changed[path] = new
    return changed


async def apply_fixes(
    github: InstallationClient, record: RunRecord, pull: PullRequest
) -> AppliedCommit:
    """Commit the fixes of `record` (the pull request's latest run) on `pull`'s head branch.

    `pull` is the pull request as GitHub has it now. Raise :class:`ApplyRefused` when the
    fixes cannot or may not be committed; nothing is written then.
    """
    head_repo = _check_applicable(record, pull)
    fixed = _fixed(record)
    if not fixed:
        raise ApplyRefused("The latest review has no agreed or forced fixes to apply.")
    current = {}
    for path in sorted({patch.path for _, _, patch in fixed}):
        found = await github.git.head_file(head_repo, path, pull.head_sha)
        if found is not None:
            current[path] = found
    changed = patched_files(record, {path: _text(found) for path, found in current.items()})
    if not changed:
        raise ApplyRefused("The fixes change nothing at the head: there is nothing to commit.")
    files = [
        GitFile(path=path, mode=current[path].mode, content=text.encode())
        for path, text in sorted(changed.items())
    ]
    fixes = [
        AppliedFix(
            label=label,
            severity=result.finding.severity,
            claim=result.finding.claim,
            location=location(patch.path, patch.start_line, patch.end_line),
        )
        for label, result, patch in fixed
    ]
    sha = await _commit(github, head_repo, pull, files, commit_message(fixes))
    return AppliedCommit(
        sha=sha,
        repo=head_repo,
        branch=pull.head_ref,
        fixes=tuple(fixes),
        files=tuple(sorted(changed)),
    )


def _check_applicable(record: RunRecord, pull: PullRequest) -> str:
    """The repository of `pull`'s head branch, to commit to; raise :class:`ApplyRefused` if
    Tiebreak may not commit there now."""
    if pull.state != "open":
        raise ApplyRefused("The pull request is closed: Tiebreak only commits to open ones.")
    head_repo = pull.head_repo
    if head_repo is None:
        raise ApplyRefused(
            "GitHub no longer names the repository this pull request's head comes from: its "
            "fork was deleted, so Tiebreak has no branch to commit to, and nothing was changed."
        )
    if pull.from_fork and not pull.maintainer_can_modify:
        raise ApplyRefused(
            f"This pull request comes from the fork {md.code(head_repo)}, which does not "
            "allow edits by maintainers: commit the review's suggestions instead, or tick "
            "“Allow edits by maintainers” and ask again."
        )
    if not pushable(pull.head_ref):
        raise ApplyRefused(
            f"Tiebreak cannot push to the branch {md.code(pull.head_ref)}: its GitHub client "
            "cannot name a branch with `#` in it. Commit the review's suggestions instead."
        )
    if pull.head_sha != record.ref.head_sha:
        raise ApplyRefused(
            f"The head moved since the review (reviewed {record.ref.head_sha[:7]}, now "
            f"{pull.head_sha[:7]}); comment `/tiebreak review` first."
        )
    return head_repo


async def _commit(
    github: InstallationClient,
    head_repo: str,
    pull: PullRequest,
    files: list[GitFile],
    message: str,
) -> str:
    """Commit `files` on `pull`'s head branch in `head_repo`, on its head; the new commit's
    sha."""
    try:
        return await github.git.commit_files(
            head_repo, pull.head_ref, pull.head_sha, files, message
        )
    except BranchMoved as exc:
        raise ApplyRefused(
            "The branch moved while applying; nothing was changed. "
            "Comment `/tiebreak review` to review the new head."
        ) from exc
    except NotWritable as exc:
        raise ApplyRefused(
            f"GitHub does not let Tiebreak push to {md.code(head_repo)}; nothing was changed. "
            "The App needs write access to the repository's contents."
        ) from exc


def commit_message(fixes: list[AppliedFix]) -> str:
    """The subject, then one line a fix: `- F1 (blocker) app/payments.py:16: <claim>`."""
    lines = [f"- {f.label} ({f.severity}) {f.location}: {_claim(f.claim)}" for f in fixes]
    return f"{SUBJECT}\n\n" + "\n".join(lines) + "\n"


def _fixed(record: RunRecord) -> list[tuple[str, FindingOutcome, Patch]]:
    """Every fixed finding with its patch, labelled as the review published it."""
    several = len(record.review.units) > 1
    return [
        (
            finding_key(unit.unit_id, result.finding.id) if several else result.finding.id,
            result,
            patch,
        )
        for unit in record.review.units
        for result in unit.findings
        # Agreed (unanimous) and forced (arbiter) fixes alike end `fixed`, with their patch.
        if result.resolution is Resolution.FIXED and (patch := result.patch) is not None
    ]


def _patch_file(text: str, patches: list[tuple[str, Patch]], diff: Diff) -> str:
    try:
        return apply_patches(text, [patch for _, patch in patches], diff)
    except PatchesOverlap as exc:
        (first, a), (second, b) = patches[exc.first], patches[exc.second]
        raise ApplyRefused(
            f"The fixes for {_label(first)} at {_where(a)} and {_label(second)} at "
            f"{_where(b)} overlap; commit one of them from the review's suggestions instead."
        ) from exc
    except StaleLines as exc:
        label, patch = patches[exc.index]
        raise ApplyRefused(
            f"The fix for {_label(label)} at {_where(patch)} no longer applies: "
            "those lines are not what the review saw."
        ) from exc


def _text(found: GitFile) -> str:
    try:
        return found.content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApplyRefused(
            f"{md.code(found.path)} is not UTF-8 text at the head: Tiebreak does not edit it."
        ) from exc


def _where(patch: Patch) -> str:
    """The patch's place as Markdown: the path is the pull request author's text."""
    return md.code(location(patch.path, patch.start_line, patch.end_line))


def _label(label: str) -> str:
    return md.inline(label, 100)


def _claim(claim: str) -> str:
    """A model's claim fit for a commit message: one line, so it cannot add paragraphs or
    trailers, and with its `#12` and `@name` made inert, so merging the commit closes no
    issue (`fixes #12`) and pings nobody."""
    return _REFERENCE.sub("\\1" + md.ZWJ, md.one_line(claim, MAX_CLAIM))
