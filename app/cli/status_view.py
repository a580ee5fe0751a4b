"""What `tiebreak status` shows (:mod:`app.cli.status`): a snapshot of the live review runs in
Redis, and how it reads as text.

Everything shown comes from Redis, which every worker (and anyone who reaches it) writes, so
it is untrusted: each value is printed without its control characters, so that none can move
the cursor or clear the screen, and a run whose keys do not parse is shown as unreadable
rather than ending the view.
"""

import asyncio
import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import click
from pydantic import ValidationError

from agents.models.llm import Role
from app.cli.exits import fail
from app.cli.printable import printable
from app.cli.server_redis import server_redis
from app.events import PullRequestRef
from app.settings import get_settings, settings_problem
from app.store.connection import STORE_ERRORS
from app.store.live import LiveRuns
from app.store.records import STARTED, UnitStatus

CLEAR = "\x1b[H\x1b[2J"
"""Cursor home, then erase the screen: a terminal shows each snapshot in place."""

ERROR_WIDTH = 80
TEXT_WIDTH = 40
ID_WIDTH = 160


@dataclass(frozen=True)
class UnitSnapshot:
    status: UnitStatus
    beat: float | None
    """Seconds since the unit's attempt last beat; None once its heartbeat lapsed."""


@dataclass(frozen=True)
class RunSnapshot:
    run_id: str
    ref: PullRequestRef | None = None
    state: str = ""
    worker: str = ""
    beat: float | None = None
    """Seconds since the coordinator last beat; None once its heartbeat lapsed."""
    started: float | None = None
    resumes: int = 0
    spent: int = 0
    """Tokens the run has spent, its units' open reservations included."""
    units: tuple[UnitSnapshot, ...] = ()
    problem: str = ""
    """Why part of the run could not be read, if it could not."""


# -- gathering ---------------------------------------------------------------------------


async def snapshot(live: LiveRuns) -> list[RunSnapshot]:
    """Every live run, oldest first, as Redis describes it now."""
    runs = []
    for run_id in await live.live_runs():
        run = await _run(live, run_id)
        if run is not None:
            runs.append(run)
    return runs


async def _run(live: LiveRuns, run_id: str) -> RunSnapshot | None:
    try:
        status = await live.run_status(run_id)
    except UnicodeDecodeError as exc:
        return RunSnapshot(run_id, problem=f"its fields are not text ({exc})")
    except ValueError as exc:  # a field no worker writes: not a state, not a number
        return RunSnapshot(run_id, problem=f"unreadable run: {exc}")
    if status is None:
        return None  # it ended, and its keys expired, since the list was read
    beats = await live.heartbeat_ages(run_id, status.units)
    run = RunSnapshot(
        run_id,
        ref=status.ref,
        state=status.state or "",
        worker=status.worker,
        beat=beats[0],
        started=status.started,
        resumes=status.resumes,
    )
    try:
        units = await live.units(run_id, range(status.units))
        spent = await live.ceiling(run_id, 0).spent()
    except ValueError as exc:  # a field no worker writes: not a state, not a number, not text
        return replace(run, problem=f"unreadable units: {exc}")
    return replace(
        run,
        spent=spent,
        units=tuple(UnitSnapshot(u, beat) for u, beat in zip(units, beats[1:], strict=True)),
    )


# -- watching ----------------------------------------------------------------------------


async def watch(
    redis_url: str,
    heartbeat: float,
    show: Callable[[str], None],
    *,
    every: float | None,
    clear: bool,
) -> None:
    """Show the live runs on the Redis at `redis_url` once, or, with `every`, again every
    `every` seconds until cancelled: in place when `clear`, else one below the other."""
    async with LiveRuns.at(redis_url, heartbeat) as live:
        while True:
            frame = render(await snapshot(live), datetime.now().astimezone())
            show(CLEAR + frame if clear else frame)
            if every is None:
                return
            await asyncio.sleep(every)
            if not clear:
                show("")


# -- rendering ---------------------------------------------------------------------------


def render(runs: Sequence[RunSnapshot], now: datetime) -> str:
    """The runs as plain text at `now` (an aware datetime, shown in its own time zone)."""
    count = f"{len(runs)} live run{'' if len(runs) == 1 else 's'}"
    header = f"Tiebreak status · {now:%Y-%m-%d %H:%M:%S %Z} · {count}"
    if not runs:
        return f"{header}\n\nNo live runs."
    return "\n\n".join([header, *(_run_text(run, now.timestamp()) for run in runs)])


def _run_text(run: RunSnapshot, now: float) -> str:
    ref = run.ref
    pull = f"{ref.key} at {ref.head_sha[:7]}" if ref else "unknown pull request"
    state = clean(run.state, TEXT_WIDTH) or "?"
    lines = [f"{pull} · {state} · run {clean(run.run_id, ID_WIDTH)}"]
    started = "?" if run.started is None else _duration(now - run.started)
    coordinator = [
        f"coordinator {clean(run.worker, TEXT_WIDTH) or '?'}",
        "heartbeat lapsed" if run.beat is None else f"beat {_age(run.beat)} ago",
        f"started {started} ago",
        f"{run.spent:,} tokens spent",
    ]
    if run.resumes:
        coordinator.append(f"resumed {run.resumes} time{'' if run.resumes == 1 else 's'}")
    lines.append("  " + " · ".join(coordinator))
    if run.units:
        lines += _units_table(run.units)
    if run.problem:
        lines.append(f"  {clean(run.problem, ERROR_WIDTH)}")
    return "\n".join(lines)


_COLUMNS = ("unit", "state", "attempt", "worker", "beat", "round", "calls", "tokens", "agents")
_RIGHT = {0, 2, 4, 5, 6, 7}
"""Columns of numbers, aligned to the right."""


def _units_table(units: Sequence[UnitSnapshot]) -> list[str]:
    errors = any(u.status.error for u in units)
    rows = [[*_COLUMNS, "error"] if errors else list(_COLUMNS)]
    for unit in units:
        s = unit.status
        row = [
            str(s.number),
            s.state,
            str(s.attempt),
            clean(s.worker, TEXT_WIDTH) or "-",
            _unit_beat(unit),
            str(s.round),
            str(s.calls),
            f"{s.tokens:,}",
            " ".join(f"{role}:{s.agents[role]}" for role in Role if role in s.agents) or "-",
        ]
        rows.append([*row, clean(s.error, ERROR_WIDTH)] if errors else row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  "
        + "  ".join(
            cell.rjust(width) if i in _RIGHT else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def _unit_beat(unit: UnitSnapshot) -> str:
    if unit.beat is not None:
        return _age(unit.beat)
    # Only a unit some worker runs beats: a waiting or ended one has nothing to lapse.
    return "lapsed" if unit.status.state in STARTED else "-"


def _age(seconds: float) -> str:
    return f"{seconds:.1f}s"


def _duration(seconds: float) -> str:
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def clean(value: str, width: int) -> str:
    """`value` on one line as the terminal may show it (:func:`printable`), clipped to
    `width` characters."""
    kept = printable(value, one_line=True)
    return kept if len(kept) <= width else kept[: width - 1] + "…"


def show(once: bool, every: float) -> None:
    """Show the live runs on the server's Redis once, or every `every` seconds until Ctrl-C."""
    try:
        settings = get_settings()
    except ValidationError as exc:
        fail(settings_problem(exc))
    redis_url = server_redis(settings)
    clear = not once and sys.stdout.isatty()
    # Ctrl-C is how the view ends: quietly, and successfully.
    with contextlib.suppress(KeyboardInterrupt):
        try:
            asyncio.run(
                watch(
                    redis_url,
                    settings.tiebreak_heartbeat,
                    click.echo,
                    every=None if once else every,
                    clear=clear,
                )
            )
        except STORE_ERRORS as exc:
            fail(f"cannot reach Redis: {exc}")
