"""The fleet's counters: what each one counts, and one process's counts in memory.

Tiebreak runs as several processes (web servers, workers on other hosts) on one Redis, and
`GET /metrics` on any web server reports them all. Each process counts in memory —
:meth:`Metrics.inc` does no I/O, so counting never slows a webhook or a job — and
:mod:`app.store.counters` adds what it counted to the fleet's totals in Redis every few seconds.
Labels carry no repository, user or other private or unbounded value.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Counter:
    """A counter's definition: its name, what it counts and the labels each count carries."""

    name: str
    help: str
    labels: tuple[str, ...] = ()


WEBHOOKS = Counter(
    "tiebreak_webhooks_total",
    "Webhook deliveries answered, by event (unknown before the signature is verified) and "
    "outcome (enqueued, recorded, skipped, ignored, duplicate, pong; invalid_signature, "
    "too_large, bad_request, busy, too_slow, incomplete, unavailable, error).",
    ("event", "outcome"),
)
JOBS = Counter(
    "tiebreak_jobs_total",
    "Queue jobs that ran to an end, by function and outcome (completed, failed, cancelled).",
    ("function", "outcome"),
)
LLM_CALLS = Counter(
    "tiebreak_llm_calls_total",
    "Model calls made (journal replays excluded), by role and outcome (ok, error).",
    ("role", "outcome"),
)
LLM_TOKENS = Counter(
    "tiebreak_llm_tokens_total",
    "Tokens of the model calls made, by role and kind: uncached (input not from the cache), "
    "cache_write, cache_read, output.",
    ("role", "kind"),
)
DEBATES = Counter(
    "tiebreak_debates_total",
    "Findings debated, by the consensus they ended with.",
    ("consensus",),
)
ARBITRATIONS = Counter(
    "tiebreak_arbitrations_total",
    "Findings sent to the arbiter, by what sent them.",
    ("trigger",),
)
LOOP_DETECTIONS = Counter(
    "tiebreak_loop_detections_total",
    "Findings whose thread was caught looping (a repeated or oscillating message).",
)
BUDGET_EXHAUSTIONS = Counter(
    "tiebreak_budget_exhaustions_total",
    "Pairwise budgets (one per edge of a debate) that ran out: spent, or dropped to zero for "
    "a repeated answer.",
)
GITHUB_API_ERRORS = Counter(
    "tiebreak_github_api_errors_total",
    "Failed GitHub API requests, each attempt of a retried call counted, by status "
    "(transport: a timeout or a failed connection; other: refused before it was sent). "
    "Includes answers Tiebreak expects and handles, such as 404 for a repository without a "
    "config file.",
    ("status",),
)

COUNTERS = (
    WEBHOOKS,
    JOBS,
    LLM_CALLS,
    LLM_TOKENS,
    DEBATES,
    ARBITRATIONS,
    LOOP_DETECTIONS,
    BUDGET_EXHAUSTIONS,
    GITHUB_API_ERRORS,
)

Labels = tuple[str, ...]
"""A count's label values, in the order of its counter's labels."""

Counts = dict[str, dict[Labels, int]]
"""Totals by counter name, then by label values."""


class Metrics:
    """One process's counts not yet added to the fleet's. Used from one event loop."""

    def __init__(self) -> None:
        self._pending: dict[str, int] = {}

    def inc(self, counter: Counter, amount: int = 1, **labels: str) -> None:
        """Count `amount` more for `counter` with these labels (all of its labels)."""
        if amount < 0:
            raise ValueError(f"{counter.name} only goes up")
        if labels.keys() != set(counter.labels):
            raise ValueError(f"{counter.name} takes labels {counter.labels}, not {tuple(labels)}")
        if amount:
            key = key_of(counter.name, labels)
            self._pending[key] = self._pending.get(key, 0) + amount

    def pending(self) -> Counts:
        """What this process counted and has yet to flush."""
        return decoded(self._pending)

    def take(self) -> dict[str, int]:
        """Everything counted and not yet taken, by :func:`key_of`; counting starts afresh."""
        taken, self._pending = self._pending, {}
        return taken

    def keep(self, counts: Mapping[str, int]) -> None:
        """Count again what :meth:`take` gave and could not be added to the fleet's."""
        for key, amount in counts.items():
            self._pending[key] = self._pending.get(key, 0) + amount


def key_of(name: str, labels: Mapping[str, str]) -> str:
    """How a count is keyed: its counter's name and its labels as JSON, the same for the same
    labels in any order."""
    return json.dumps([name, sorted((k, str(v)) for k, v in labels.items())])


_BY_NAME = {counter.name: counter for counter in COUNTERS}


def decoded(counts_by_key: Mapping[str, int]) -> Counts:
    """Counts by :func:`key_of`, by counter and labels; keys of counters this version does not
    know (a newer one's, during a rolling deploy) are left out."""
    counts: Counts = {}
    for key, value in counts_by_key.items():
        try:
            name, pairs = json.loads(key)
            labels = dict(pairs)
        except (ValueError, TypeError):
            continue
        counter = _BY_NAME.get(name)
        if counter is None or labels.keys() != set(counter.labels):
            continue
        values = tuple(str(labels[label]) for label in counter.labels)
        counts.setdefault(name, {})[values] = value
    return counts
