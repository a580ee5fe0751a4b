"""The debate transcripts of finished runs, kept in Redis for the transcript page.

A transcript holds private code (the diff, the patches, the agents' arguments), so it lives
only as long as the repository's operator chose (`TIEBREAK_TRANSCRIPT_RETENTION`) and is read
only through a signed link (:mod:`app.links`). Stored compressed (most of it is the agents'
prose, which compresses several times over), and without the pull request's whole diff: the
page shows the diff only as the lines a patch replaces, so a transcript keeps the files that a
finding or a patch is about, and no other.
"""

import time
from collections.abc import Mapping, Sequence
from typing import Self

from pydantic import BaseModel, ConfigDict
from redis.asyncio import Redis

from agents.diff import Diff
from agents.review import Review
from app.events import PullRequestRef
from app.publishing.publication import FollowedThread, Spend
from app.store import keys
from app.store.packed import pack, unpack
from app.store.plans import RunPlan


class TranscriptRecord(BaseModel):
    """Everything the transcript page shows of one run."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    ref: PullRequestRef
    title: str = ""
    html_url: str = ""
    started_at: float
    """When the run planned its debates (Unix time)."""
    finished_at: float
    conclusion: str
    review: Review
    """Every finding the debates ended with, including those the config did not publish."""
    diff: str
    """The files of the reviewed diff that findings and patches are about, for the patches'
    context."""
    min_severity: str = "nit"
    spent: int = 0
    """Billed tokens of the run, as its ceiling counted them."""
    ceiling: int = 0
    learned: dict[str, tuple[str, ...]] = {}
    """The repository's learnings each unit's agents read, by unit id, as they read them."""
    followed: list[FollowedThread] = []
    """The earlier proven findings whose tests the run ran again at its head, and what each
    showed there."""

    @classmethod
    def of_run(
        cls,
        plan: RunPlan,
        diff: Diff,
        debated: Review,
        spend: Spend,
        conclusion: str,
        learned: Mapping[str, tuple[str, ...]] | None = None,
        followed: Sequence[FollowedThread] = (),
    ) -> Self:
        """The record of a run that has just published what its debates found on `diff`;
        `learned`, the learnings its units read; `followed`, the proven findings' tests it ran
        again."""
        return cls(
            run_id=plan.run_id,
            ref=plan.ref,
            title=plan.title,
            html_url=plan.html_url,
            started_at=plan.started_at,
            finished_at=time.time(),
            conclusion=conclusion,
            review=debated,
            diff=_discussed(diff, debated).text,
            min_severity=plan.config.min_severity,
            spent=spend.spent,
            ceiling=spend.ceiling,
            learned={unit: lines for unit, lines in (learned or {}).items() if lines},
            followed=list(followed),
        )


class TranscriptStore:
    def __init__(self, redis: Redis, retention_days: int) -> None:
        self.redis = redis
        self.retention = retention_days * keys.DAY
        """Seconds a transcript is kept; 0 keeps none."""

    async def save(self, record: TranscriptRecord) -> bool:
        """Keep `record` for the retention period; False when transcripts are not kept."""
        if not self.retention:
            return False
        await self.redis.set(keys.transcript(record.run_id), pack(record), ex=self.retention)
        return True

    async def add_rulings(self, run_id: str, review: Review, conclusion: str) -> None:
        """Bring a kept transcript up to date with rulings asked for after the run
        (`/tiebreak arbitrate`): `review` is the published review with them, which lacks the
        findings the config did not publish; those stay as they were."""
        record = await self.load(run_id)
        if record is None:
            return
        ruled = {unit.unit_id: unit for unit in review.units}
        units = []
        for unit in record.review.units:
            new = ruled.get(unit.unit_id)
            if new is not None:
                latest = {f.finding.id: f for f in new.findings}
                findings = [latest.get(f.finding.id, f) for f in unit.findings]
                unit = new.model_copy(update={"findings": findings})
            units.append(unit)
        updated = record.model_copy(
            update={"review": Review(units=units), "conclusion": conclusion}
        )
        await self.redis.set(keys.transcript(run_id), pack(updated), keepttl=True, xx=True)

    async def load(self, run_id: str) -> TranscriptRecord | None:
        data = await self.redis.get(keys.transcript(run_id))
        if data is None:
            return None
        return unpack(TranscriptRecord, data)


def _discussed(diff: Diff, review: Review) -> Diff:
    """The files of `diff` that a finding or a patch of `review` is about."""
    paths = {f.finding.path for f in review.findings} | {
        m.patch.path for u in review.units for m in u.transcript.messages if m.patch is not None
    }
    return Diff(tuple(f for f in diff.files if f.path in paths))
