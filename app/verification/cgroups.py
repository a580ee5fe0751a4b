"""A control group of its own for each run of a finding's test: all its processes together
held to its memory (the pages of its files in memory counted: its copy of the tree, `/tmp`,
`/dev/shm`) and to a number of processes, whatever each process's own limits; and, where the
machine offers the cpu controller, weighed as one process when the CPU is shared out.

The CPU's weight: a run starting many busy processes (a fork bomb held to its number, a
parallel test runner) takes no more of a busy CPU than a run of one process, and all the runs
together (the group `tiebreak-runs`) no more than one of Tiebreak's own processes: the
debate's event loop is never starved by tests. Nothing is capped: an idle CPU is anyone's.

The groups are made under `tiebreak-runs`, a group of Tiebreak's own below the one Tiebreak's
process is in (so that whatever bounds Tiebreak bounds its runs too), in whichever hierarchy
the machine has (:meth:`RunGroups.find`):

* **cgroup v2**, one tree (`cgroup2`, at `/sys/fs/cgroup` on modern hosts, delegated to a user
  by systemd): `memory.max`, `memory.swap.max` (0: no swap beyond it) and `pids.max`; the
  `cpu` controller handed down too where the group offers it (its default weight each). A group
  holding processes cannot hand its controllers to groups below it: Tiebreak first moves its
  own process into `tiebreak-self` beside `tiebreak-runs`, which works where Tiebreak is alone
  in a group delegated to it (`systemd-run --user --scope -p Delegate=yes tiebreak …`); as
  root, the hierarchy's top is used where Tiebreak's own group refuses.
* **cgroup v1**, one hierarchy per controller (`/sys/fs/cgroup/memory` and `…/pids`):
  `memory.limit_in_bytes`, and `memory.memsw.limit_in_bytes` (memory and swap together) where
  swap is accounted; `pids.max`; a group in `/sys/fs/cgroup/cpu` too where that hierarchy is
  mounted and Tiebreak may write to it (its default `cpu.shares` each).

A run's processes join its group before bubblewrap starts (:attr:`RunGroup.procs`), so every
process it starts is counted; once the run is over, whatever is left in the group is killed
and the group removed (:meth:`RunGroup.remove`). A run the kernel killed for its memory reads
so (:meth:`RunGroup.out_of_memory`).
"""

import contextlib
import errno
import logging
import os
import re
import secrets
import signal
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from app.verification.runner import MB
from policies.errors import TiebreakError

log = logging.getLogger(__name__)

PARENT = "tiebreak-runs"
SELF = "tiebreak-self"
CONTROLLERS = ("memory", "pids")
"""What a run's group must have: its limits."""
WEIGHT = "cpu"
"""What it has where the machine offers it: the CPU's sharing out, by group."""
PROC = Path("/proc/self")
KILL_ROUNDS = 50
KILL_PAUSE_S = 0.02


class CgroupVersion(StrEnum):
    V1 = "v1"
    V2 = "v2"


class CgroupUnavailable(TiebreakError):
    """No group can bound a run's memory here: `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class RunGroup:
    """One run's group: a directory per hierarchy (v1: memory's, pids', then cpu's where
    there is one; v2: one)."""

    version: CgroupVersion
    directories: tuple[Path, ...]

    @property
    def procs(self) -> tuple[Path, ...]:
        """The files a process writes its pid to, to join the group."""
        return tuple(directory / "cgroup.procs" for directory in self.directories)

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the run for the group's memory."""
        name = "memory.events" if self.version is CgroupVersion.V2 else "memory.oom_control"
        try:
            text = (self.directories[0] / name).read_text()
        except OSError:
            return False
        counts = dict(line.split(maxsplit=1) for line in text.splitlines() if " " in line)
        return counts.get("oom_kill", "0").strip() not in ("", "0")

    def remove(self) -> None:
        """What is left in the group killed, then the group removed; a failure is logged."""
        for directory in self.directories:
            try:
                _empty(directory)
                directory.rmdir()
            except OSError as exc:
                log.warning("the run's cgroup %s could not be removed: %s", directory, exc)


@dataclass(frozen=True)
class RunGroups:
    """Where the runs' groups are made: `tiebreak-runs` in each hierarchy."""

    version: CgroupVersion
    parents: tuple[Path, ...]

    @classmethod
    def find(cls, proc: Path = PROC) -> "RunGroups":
        """The hierarchies of this machine, `tiebreak-runs` made in them; raise
        :class:`CgroupUnavailable` saying why there are none."""
        mounts = _mounts(proc)
        groups = _own_groups(proc)
        v2 = _v2_directory(mounts, groups)
        if v2 is not None and _has_controllers(v2):
            return cls(CgroupVersion.V2, (_v2_parent(v2, _v2_top(mounts)),)).swept()
        v1 = [_v1_directory(mounts, groups, name) for name in CONTROLLERS]
        missing = [name for name, found in zip(CONTROLLERS, v1, strict=True) if found is None]
        if missing:
            raise CgroupUnavailable(
                f"no cgroup hierarchy here offers Tiebreak the {' and '.join(missing)} "
                f"controller{'s' if len(missing) > 1 else ''} (v2: {v2 or 'not mounted'})"
            )
        parents = tuple(_made(found / PARENT) for found in v1 if found is not None)
        return cls(CgroupVersion.V1, parents + _v1_weight(mounts, groups)).swept()

    def swept(self) -> "RunGroups":
        """These groups, with the empty groups of runs whose Tiebreak process is gone removed:
        a process killed during a run (a worker stopped hard) leaves its group behind, named
        with that process's id. A group a process is still in is left alone."""
        for parent in self.parents:
            for stale in parent.glob("run-*-*"):
                pid = stale.name.split("-")[1]
                if pid.isdigit() and not _alive(int(pid)):
                    with contextlib.suppress(OSError):
                        stale.rmdir()  # the kernel refuses a group with a process in it
                        log.info("removed the cgroup %s of a run whose process is gone", stale)
        return self

    def make(self, memory_mb: int, processes: int) -> RunGroup:
        """A new run's group with its limits; OSError if it cannot be made."""
        name = f"run-{os.getpid()}-{secrets.token_hex(6)}"
        group = RunGroup(self.version, tuple(parent / name for parent in self.parents))
        try:
            for directory in group.directories:
                directory.mkdir()
            for file, value in _limits(group, memory_mb, processes):
                file.write_text(value)
        except OSError:
            group.remove()
            raise
        return group


def _limits(group: RunGroup, memory_mb: int, processes: int) -> list[tuple[Path, str]]:
    memory = str(memory_mb * MB)
    if group.version is CgroupVersion.V2:
        (directory,) = group.directories
        limits = [(directory / "memory.max", memory), (directory / "pids.max", str(processes))]
        swap = directory / "memory.swap.max"
        return limits + ([(swap, "0")] if swap.exists() else [])
    memory_directory, pids_directory, *_ = group.directories
    # The memory limit first: memory and swap together may never be set below it.
    limits = [(memory_directory / "memory.limit_in_bytes", memory)]
    if (swap := memory_directory / "memory.memsw.limit_in_bytes").exists():
        limits.append((swap, memory))
    return [*limits, (pids_directory / "pids.max", str(processes))]


def _empty(directory: Path) -> None:
    """Every process in the group killed, and gone from it."""
    for _ in range(KILL_ROUNDS):
        try:
            pids = [int(pid) for pid in (directory / "cgroup.procs").read_text().split()]
        except FileNotFoundError:
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(KILL_PAUSE_S)
    raise OSError(errno.EBUSY, "its processes would not die")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _made(directory: Path) -> Path:
    try:
        directory.mkdir(exist_ok=True)
    except OSError as exc:
        raise CgroupUnavailable(f"cannot make the cgroup {directory}: {exc.strerror}") from exc
    return directory


def _has_controllers(directory: Path) -> bool:
    return all(name in _offered(directory) for name in CONTROLLERS)


def _v2_parent(own: Path, top: Path | None) -> Path:
    """`tiebreak-runs` below `own`, the controllers handed down to it (Tiebreak's process
    moved out of `own` first, if need be); as root, below the hierarchy's `top` if `own`
    refuses."""
    try:
        return _v2_runs_under(own, move_self=True)
    except CgroupUnavailable as refused:
        if top is None or top == own or os.geteuid() != 0:
            raise
        try:
            return _v2_runs_under(top, move_self=False)
        except CgroupUnavailable:
            raise refused from None


def _v2_runs_under(group: Path, *, move_self: bool) -> Path:
    """`tiebreak-runs` below `group`, the controllers handed down to it: the cpu controller
    too where `group` offers it and it can be handed down."""
    if WEIGHT in _offered(group):
        with contextlib.suppress(CgroupUnavailable):
            return _v2_hand_down(group, (*CONTROLLERS, WEIGHT), move_self=move_self)
    return _v2_hand_down(group, CONTROLLERS, move_self=move_self)


def _v2_hand_down(group: Path, controllers: tuple[str, ...], *, move_self: bool) -> Path:
    enable = " ".join(f"+{name}" for name in controllers)
    try:
        if not _delegates(group, controllers):
            try:
                (group / "cgroup.subtree_control").write_text(enable)
            except OSError as exc:
                if exc.errno != errno.EBUSY or not move_self:
                    raise
                # Processes in the group: Tiebreak's own goes to a leaf beside the runs.
                _made(group / SELF)
                (group / SELF / "cgroup.procs").write_text(str(os.getpid()))
                (group / "cgroup.subtree_control").write_text(enable)
        parent = _made(group / PARENT)
        if not _delegates(parent, controllers):
            (parent / "cgroup.subtree_control").write_text(enable)
    except OSError as exc:
        raise CgroupUnavailable(
            f"cgroup v2: the group {group} cannot give groups of its own the memory and pids "
            f"controllers ({exc.strerror or exc}): start Tiebreak alone in a group delegated "
            "to it, e.g. `systemd-run --user --scope -p Delegate=yes tiebreak …`"
        ) from exc
    return parent


def _offered(group: Path) -> list[str]:
    try:
        return (group / "cgroup.controllers").read_text().split()
    except OSError:
        return []


def _delegates(group: Path, controllers: tuple[str, ...]) -> bool:
    try:
        enabled = (group / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False
    return all(name in enabled for name in controllers)


@dataclass(frozen=True)
class _Mount:
    root: str
    point: Path
    kind: str
    options: tuple[str, ...]


def _mounts(proc: Path) -> list[_Mount]:
    """The cgroup file systems mounted, from `mountinfo`."""
    found = []
    for line in _read(proc / "mountinfo").splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        point = Path(_unescape(fields[4]))
        found.append(_Mount(_unescape(fields[3]), point, tail[0], tuple(tail[2].split(","))))
    return found


def _own_groups(proc: Path) -> dict[str, str]:
    """The group this process is in, by controller (`""`: cgroup v2's)."""
    groups = {}
    for line in _read(proc / "cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            groups[name] = path
    return groups


def _v2_directory(mounts: list[_Mount], groups: dict[str, str]) -> Path | None:
    for mount in mounts:
        if mount.kind == "cgroup2" and "" in groups:
            return _inside(mount, groups[""])
    return None


def _v2_top(mounts: list[_Mount]) -> Path | None:
    return next((m.point for m in mounts if m.kind == "cgroup2" and m.root == "/"), None)


def _v1_directory(mounts: list[_Mount], groups: dict[str, str], name: str) -> Path | None:
    for mount in mounts:
        if mount.kind == "cgroup" and name in mount.options and name in groups:
            return _inside(mount, groups[name])
    return None


def _v1_weight(mounts: list[_Mount], groups: dict[str, str]) -> tuple[Path, ...]:
    """`tiebreak-runs` in the cpu hierarchy, or nothing where there is none Tiebreak may
    write to: the runs are then weighed by their processes."""
    found = _v1_directory(mounts, groups, WEIGHT)
    if found is None:
        return ()
    try:
        return (_made(found / PARENT),)
    except CgroupUnavailable as refused:
        log.info("the runs share the CPU by their processes: %s", refused.reason)
        return ()


def _inside(mount: _Mount, path: str) -> Path | None:
    """Where the group at `path` is under `mount` (None if the mount does not show it)."""
    relative = os.path.relpath(path, mount.root)
    if relative.startswith(".."):
        return None
    directory = mount.point / relative
    return directory if directory.is_dir() else None


def _unescape(field: str) -> str:
    """mountinfo's octal escapes (`\\040` for a space) undone."""
    return re.sub(r"\\([0-7]{3})", lambda octal: chr(int(octal[1], 8)), field)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise CgroupUnavailable(f"{path} cannot be read: {exc.strerror}") from exc
