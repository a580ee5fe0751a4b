"""`tiebreak status`: the live runs as a worker leaves them in Redis, and how they read."""

import asyncio
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from redis.asyncio import Redis

from agents.models.llm import Role
from app.cli.main import main
from app.cli.status_view import RunSnapshot, UnitSnapshot, render, snapshot, watch
from app.store import keys
from app.store.embedded import EmbeddedRedis, redis_dir
from app.store.keys import review_job_id
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from app.store.records import RunStatus, State, UnitStatus
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import HeldModel, agreed
from tests.scenarios.reviews import REF, background_worker, worker_setup

NOW = datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)
RUN_ID = review_job_id(REF)
HOSTILE = "\x1b[2J\x1b[Hhost\x07:\x9b31m7\u202e"


class Enough(Exception):
    """Stops a view that would go on until Ctrl-C."""


def tiebreak(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, ["status", *args], env=env)


async def test_status_shows_a_review_mid_debate(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    model = HeldModel(agreed())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        await ReviewQueue(redis).enqueue_review(REF)
        await asyncio.wait_for(model.first_call.wait(), 20)

        result = await asyncio.to_thread(tiebreak, "--once", env={"REDIS_URL": redis_url})

    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "· 1 live run\n" in out
    assert f"Codertocat/Hello-World#2 at aaaaaaa · waiting · run {RUN_ID}\n" in out
    coordinator = re.search(
        r"^  coordinator \S+ · beat (\d+\.\d)s ago · started \d+s ago", out, re.M
    )
    assert coordinator is not None, out
    assert float(coordinator[1]) < 30
    unit = re.search(r"^  +0  active  +1  \S+  +(\d+\.\d)s  .*tester:active", out, re.M)
    assert unit is not None, out
    assert float(unit[1]) < 30
    assert "lapsed" not in out
    assert "\x1b" not in out


def test_a_snapshot_reads_as_aligned_text() -> None:
    tester_asks = {
        Role.CODER: State.WAITING,
        Role.TESTER: State.ACTIVE,
        Role.ARBITER: State.WAITING,
    }
    runs = [
        RunSnapshot(
            RUN_ID,
            ref=REF,
            state="waiting",
            worker="web-1:812",
            beat=2.42,
            started=NOW.timestamp() - 65,
            resumes=1,
            spent=12_345,
            units=(
                UnitSnapshot(
                    UnitStatus(
                        number=0,
                        state=State.ACTIVE,
                        worker="worker-2:77",
                        round=2,
                        calls=3,
                        tokens=8_100,
                        agents=tester_asks,
                    ),
                    beat=0.5,
                ),
                UnitSnapshot(
                    UnitStatus(number=1, state=State.ACTIVE, attempt=2, worker="w:9"), beat=None
                ),
                UnitSnapshot(UnitStatus(number=12), beat=None),
            ),
        )
    ]

    assert render(runs, NOW).splitlines() == [
        "Tiebreak status · 2025-03-14 09:26:53 UTC · 1 live run",
        "",
        f"Codertocat/Hello-World#2 at aaaaaaa · waiting · run {RUN_ID}",
        "  coordinator web-1:812 · beat 2.4s ago · started 1m05s ago · 12,345 tokens spent"
        " · resumed 1 time",
        "  unit  state    attempt  worker         beat  round  calls  tokens  agents",
        "     0  active         1  worker-2:77    0.5s      2      3   8,100"
        "  tester:active coder:waiting arbiter:waiting",
        "     1  active         2  w:9          lapsed      0      0       0  -",
        "    12  waiting        1  -                 -      0      0       0  -",
    ]


def test_a_coordinator_whose_heartbeat_lapsed_says_so() -> None:
    out = render([RunSnapshot("r1", state="active", beat=None)], NOW)

    assert "unknown pull request · active · run r1\n" in out
    assert "  coordinator ? · heartbeat lapsed · started ? ago · 0 tokens spent" in out


def test_control_characters_from_redis_never_reach_the_terminal() -> None:
    error = "RuntimeError: \x1b[31mboom\x1b[0m\nsecond line\r\x1b]0;owned\x07" + "x" * 100
    unit = UnitStatus(number=0, state=State.FAILED, worker=HOSTILE, error=error)
    run = RunSnapshot(
        "r1\x1b[2J",
        state=HOSTILE,
        worker=HOSTILE,
        beat=1.0,
        started=NOW.timestamp(),
        units=(UnitSnapshot(unit, None),),
    )

    out = render([run], NOW)

    assert not any((ch < " " and ch != "\n") or "\x7f" <= ch <= "\x9f" for ch in out)
    assert "\u202e" not in out
    # Escape sequences go whole, the text around them stays.
    assert "· host:7 · run r1\n" in out
    assert "  coordinator host:7 · beat 1.0s ago" in out
    assert "owned" not in out
    (line,) = [line for line in out.splitlines() if line.lstrip().startswith("0  failed")]
    clipped = "RuntimeError: boom second line " + "x" * 48 + "…"
    assert len(clipped) == 80
    assert line.endswith(f"  {clipped}")


def test_no_live_runs() -> None:
    assert (
        render([], NOW)
        == "Tiebreak status · 2025-03-14 09:26:53 UTC · 0 live runs\n\nNo live runs."
    )


async def test_a_run_with_units_no_worker_wrote_is_shown_as_unreadable(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    live = LiveRuns(redis, 30)
    try:
        for run in ("good", "bad"):
            await live.open(run, REF, None)
            await live.set_run(run, RunStatus(state=State.WAITING, units=1))
        await live.set_unit("good", UnitStatus(number=0, state=State.FAILED, error="Boom\x1b[2J"))
        await redis.hset(keys.unit("bad", 0), keys.UnitField.STATE, "sleeping")

        good, bad = await snapshot(live)
    finally:
        await redis.aclose()

    assert good.units[0].status.error == "Boom\x1b[2J"
    assert render([good], NOW).endswith("  Boom")
    assert bad.units == ()
    assert bad.problem.startswith("unreadable units: 1 validation error for UnitStatus")
    assert "  unreadable units: 1 validation error" in render([bad], NOW)


async def test_a_run_whose_coordinator_no_worker_wrote_is_shown_as_unreadable(
    redis_url: str,
) -> None:
    redis = Redis.from_url(redis_url)
    live = LiveRuns(redis, 30)
    try:
        await live.open("odd", REF, None)
        await redis.hset(keys.run("odd"), keys.RunField.UNITS, "many")

        (odd,) = await snapshot(live)
    finally:
        await redis.aclose()

    assert odd.problem.startswith("unreadable run: 1 validation error for RunStatus")
    assert "odd" in render([odd], NOW)


async def test_watching_prints_a_snapshot_after_each_wait(redis_url: str) -> None:
    frames: list[str] = []

    def show(frame: str) -> None:
        frames.append(frame)
        if len(frames) == 3:
            raise Enough

    with pytest.raises(Enough):
        await watch(redis_url, 30, show, every=0.01, clear=False)

    first, blank, second = frames
    assert first.endswith("0 live runs\n\nNo live runs.")
    assert blank == ""
    assert second.endswith("No live runs.")


def test_without_redis_url_or_a_servers_own_redis_status_says_where_it_looked(
    tmp_path: Path,
) -> None:
    # A server that ran on this data directory and stopped: its address went with it.
    with EmbeddedRedis(redis_dir(tmp_path), persist=False):
        pass

    result = tiebreak("--once", env={"TIEBREAK_DATA_DIR": str(tmp_path)})

    assert result.exit_code == 2
    assert result.stderr == (
        "tiebreak: REDIS_URL is not set, and no `tiebreak serve` runs its own Redis in "
        f"{tmp_path / 'redis'} (TIEBREAK_DATA_DIR)\n"
    )
    assert result.stdout == ""
