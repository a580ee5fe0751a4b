"""A run's cgroup: found in this machine's hierarchy (for real), made with the run's limits,
and removed with whatever is left in it; cgroup v2's layout, which these machines do not
mount with a memory controller, read from a tree of files laid out as the kernel shows it;
and the reason when there is no cgroup to be had."""

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.verification.cgroups import CgroupUnavailable, CgroupVersion, RunGroup, RunGroups
from app.verification.runner import MB


def limits_of(group: RunGroup) -> dict[str, int]:
    """The memory and processes the kernel holds `group` to."""
    if group.version is CgroupVersion.V2:
        (directory,) = group.directories
        return {
            "memory": int((directory / "memory.max").read_text()),
            "processes": int((directory / "pids.max").read_text()),
        }
    memory, pids, *_ = group.directories
    return {
        "memory": int((memory / "memory.limit_in_bytes").read_text()),
        "processes": int((pids / "pids.max").read_text()),
    }


@contextlib.contextmanager
def a_process_in(group: RunGroup) -> Iterator["subprocess.Popen[bytes]"]:
    """A process (sleeping) that has joined `group`, killed at the end if it is still there."""
    process = subprocess.Popen(["sleep", "600"])
    try:
        for procs in group.procs:
            procs.write_text(str(process.pid))
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_runs_group_holds_its_limits_and_goes_with_what_was_left_in_it() -> None:
    group = RunGroups.find().make(memory_mb=96, processes=12)
    with a_process_in(group) as left:
        limits = limits_of(group)
        group.remove()

        assert left.wait(timeout=10) == -9
    assert limits == {"memory": 96 * MB, "processes": 12}
    assert [d.exists() for d in group.directories] == [False] * len(group.directories)
    assert all(d.parent.name == "tiebreak-runs" for d in group.directories)


def test_a_runs_processes_weigh_as_one_when_the_cpu_is_shared_out() -> None:
    """This machine's cpu hierarchy (cgroup v1) holds a group for each run beside its memory's
    and processes': a fork bomb's hundred processes count as one against the other runs."""
    group = RunGroups.find().make(memory_mb=96, processes=12)
    try:
        with a_process_in(group) as busy:
            own = Path(f"/proc/{busy.pid}/cgroup").read_text().splitlines()
    finally:
        group.remove()

    (cpu,) = [line.split(":", 2)[2] for line in own if "cpu" in line.split(":")[1].split(",")]
    assert cpu.endswith(f"/tiebreak-runs/{group.directories[0].name}")
    assert len(group.directories) == 3


def test_the_groups_a_killed_tiebreak_left_are_removed_and_a_living_ones_kept() -> None:
    """A worker stopped hard during a run leaves the run's group behind; the next process
    that looks for the hierarchies removes it, and leaves a living process's group be."""
    groups = RunGroups.find()
    gone = subprocess.Popen(["true"])
    gone.wait()
    left = [parent / f"run-{gone.pid}-0123456789ab" for parent in groups.parents]
    for directory in left:
        directory.mkdir()
    living = groups.make(memory_mb=64, processes=8)
    try:
        RunGroups.find()

        assert [d.exists() for d in left] == [False] * len(left)
        assert [d.exists() for d in living.directories] == [True] * len(left)
    finally:
        living.remove()
        for directory in left:
            if directory.exists():
                directory.rmdir()


def fake_proc(tmp_path: Path, mountinfo: list[str], cgroup: list[str]) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mountinfo").write_text("".join(line + "\n" for line in mountinfo))
    (proc / "cgroup").write_text("".join(line + "\n" for line in cgroup))
    return proc


def v2_tree(tmp_path: Path, controllers: str = "cpu io memory pids") -> tuple[Path, Path]:
    """A cgroup2 mount (a space in its path, escaped in mountinfo as the kernel does) and the
    process's group in it, delegated by systemd with the controllers offered."""
    mount = tmp_path / "cgroup fs"
    own = mount / "user.slice" / "tiebreak.scope"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text(controllers + "\n")
    (own / "cgroup.subtree_control").write_text("\n")
    (own / "cgroup.procs").write_text(f"{os.getpid()}\n")
    point = str(mount).replace(" ", "\\040")
    proc = fake_proc(
        tmp_path,
        [
            f"31 23 0:28 / {tmp_path}/tmpfs rw,relatime - tmpfs tmpfs rw,mode=755",
            f"35 31 0:30 / {point} rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw",
        ],
        ["0::/user.slice/tiebreak.scope"],
    )
    return proc, own


def test_on_cgroup_v2_the_runs_get_memory_and_pids_handed_down_from_tiebreaks_group(
    tmp_path: Path,
) -> None:
    proc, own = v2_tree(tmp_path)

    groups = RunGroups.find(proc)
    group = groups.make(memory_mb=128, processes=32)

    assert groups == RunGroups(CgroupVersion.V2, (own / "tiebreak-runs",))
    assert (own / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (own / "tiebreak-runs" / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    (directory,) = group.directories
    assert directory.parent == own / "tiebreak-runs"
    assert (directory / "memory.max").read_text() == str(128 * MB)
    assert (directory / "pids.max").read_text() == "32"
    assert group.procs == (directory / "cgroup.procs",)


def test_on_cgroup_v2_without_the_cpu_controller_the_runs_get_memory_and_pids(
    tmp_path: Path,
) -> None:
    proc, own = v2_tree(tmp_path, controllers="io memory pids")

    RunGroups.find(proc)

    assert (own / "tiebreak-runs" / "cgroup.subtree_control").read_text() == "+memory +pids"


def test_on_cgroup_v2_a_group_that_cannot_hand_down_its_controllers_says_how_to_start(
    tmp_path: Path,
) -> None:
    proc, own = v2_tree(tmp_path)
    # The kernel's refusals, as a write fails: in Tiebreak's group and at the top.
    (own / "cgroup.subtree_control").unlink()
    (own / "cgroup.subtree_control").mkdir()
    (tmp_path / "cgroup fs" / "cgroup.subtree_control").mkdir()

    with pytest.raises(CgroupUnavailable) as refused:
        RunGroups.find(proc)

    assert refused.value.reason.startswith(f"cgroup v2: the group {own} cannot give groups")
    assert "systemd-run --user --scope -p Delegate=yes tiebreak" in refused.value.reason


@pytest.mark.skipif(os.geteuid() != 0, reason="the hierarchy's top is root's alone")
def test_on_cgroup_v2_root_makes_the_runs_at_the_top_where_its_group_refuses(
    tmp_path: Path,
) -> None:
    proc, own = v2_tree(tmp_path)
    (own / "cgroup.subtree_control").unlink()
    (own / "cgroup.subtree_control").mkdir()
    top = tmp_path / "cgroup fs"
    (top / "cgroup.subtree_control").write_text("cpu io memory pids\n")

    groups = RunGroups.find(proc)

    assert groups == RunGroups(CgroupVersion.V2, (top / "tiebreak-runs",))


def test_the_kernels_report_of_a_memory_kill_is_read(tmp_path: Path) -> None:
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    v1 = tmp_path / "v1"
    v1.mkdir()
    (v1 / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")

    assert RunGroup(CgroupVersion.V2, (v2,)).out_of_memory()
    assert not RunGroup(CgroupVersion.V1, (v1, tmp_path)).out_of_memory()


@pytest.mark.parametrize(
    ("mountinfo", "cgroup", "reason"),
    [
        (
            ["31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw"],
            ["0::/"],
            "no cgroup hierarchy here offers Tiebreak the memory and pids controllers "
            "(v2: not mounted)",
        ),
        (
            ["35 31 0:32 / {memory} rw - cgroup cgroup rw,memory"],
            ["4:memory:/", "0::/"],
            "no cgroup hierarchy here offers Tiebreak the pids controller (v2: not mounted)",
        ),
    ],
    ids=["none", "no pids"],
)
def test_where_no_hierarchy_offers_the_controllers_the_reason_says_which(
    tmp_path: Path, mountinfo: list[str], cgroup: list[str], reason: str
) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    lines = [line.format(memory=memory) for line in mountinfo]

    with pytest.raises(CgroupUnavailable) as refused:
        RunGroups.find(fake_proc(tmp_path, lines, cgroup))

    assert refused.value.reason == reason
