"""What a review run's steps depend on of the worker they run on, typed by what they use.

The steps never import the jobs: they are given the worker's dependencies
(:class:`app.jobs.deps.WorkerDeps`) as :class:`ReviewDeps`, the stores on the worker's Redis,
the limits and the clock they read, and nothing of the queue's wiring.
"""

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from app.links import TranscriptLinks
from app.parsing import Parsing
from app.review.gathering import ReadingLimits
from app.snapshots.cache import SnapshotCache
from app.store.allowance import DailyAllowance
from app.store.heads import Heads
from app.store.learnings import LearningStore
from app.store.live import LiveRuns
from app.store.pulls import Pulls
from app.store.transcripts import TranscriptStore


class ReviewDeps(Protocol):
    """The worker's stores, limits and clock, as a review run's steps use them."""

    @property
    def pulls(self) -> Pulls:
        """What is remembered per pull request between events."""
        ...

    @property
    def clock(self) -> Callable[[], datetime]:
        """What time it is."""
        ...

    @property
    def check_deadline(self) -> int:
        """Seconds after which the janitor completes a check run still unfinished."""
        ...

    @property
    def links(self) -> TranscriptLinks | None:
        """Makes the links to transcripts; None when the server has none."""
        ...

    @property
    def unit_tokens(self) -> int:
        """The size of a review unit, in diff tokens."""
        ...

    @property
    def parsing(self) -> Parsing:
        """Where the changed files are parsed for context."""
        ...

    @property
    def reading(self) -> ReadingLimits:
        """How much of its changed files a review reads for context."""
        ...

    @property
    def snapshots(self) -> SnapshotCache | None:
        """Where the repositories at a pull request's head are kept; None reads none."""
        ...

    def heads(self) -> Heads:
        """The pull requests' latest heads."""
        ...

    def learnings(self) -> LearningStore:
        """What each repository's people taught Tiebreak."""
        ...

    def live_runs(self) -> LiveRuns:
        """The coordination keys of live runs."""
        ...

    def transcripts(self) -> TranscriptStore:
        """Where finished runs' transcripts are kept."""
        ...

    def allowance(self, installation_id: int) -> DailyAllowance:
        """The installation's daily token allowance."""
        ...
