"""Running one command in bubblewrap's sandbox, isolated and bounded.

What a run sees and may do:

* **Isolated**: its own network (only `lo`: nothing outside answers, not even the host's own
  `127.0.0.1`), its own PIDs (every process dies with the sandbox), IPC and hostname; an
  environment cleared down to `PATH`, `HOME`, `TMPDIR`, `LANG`, the project's
  `VIRTUAL_ENV`, and Go's and npm's caches in that home with no network to reach
  (:func:`app.verification.runner.environment`).
* **Shown only what it needs** (:mod:`app.verification.mounts`): the system's programs and
  libraries, a few files of `/etc`, the checkout's environments and the installations they
  were made from, read-only; nothing of Tiebreak's own Python, none of the host's homes,
  `/run`, `/var`, `/tmp`, data or sockets.
* **Writable**: the tree with a layer of its own over it (as root; a copy of the tree made as
  it starts otherwise), `/tmp` and `/dev/shm`, each in memory and at most `disk_mb`, gone
  when it ends; the tree itself, shared by the review's runs, never.
* **As nobody** (uid 65534). Tiebreak as root drops there with `setpriv` (no groups, no
  capabilities, no new privileges) and enters a user namespace of its own, in which the
  kernel counts the run's processes apart from every other run's. Tiebreak as another user
  cannot change its uid: bubblewrap's user namespace maps that uid to 65534 inside, which
  counts processes per sandbox the same way, but files are then read with Tiebreak's user's
  rights: what that user may read and the sandbox shows, a test may read.
* **Bounded**: all its processes together, with its files in memory, by a cgroup of its own
  (:mod:`app.verification.cgroups`: `memory_mb`, `processes`), joined before bubblewrap
  starts; each process by `prlimit` (hard limits: processes, file size, open files, no core
  dumps, and its address space only where no cgroup holds the run: a runtime reserves far
  more than it uses, and the go tool, held to 1 GB of it, failed to start a thread now and
  then); and the wall clock, past which the sandbox's init is killed, ending all. A run the
  kernel killed for its memory reads "it ran out of memory".
"""

import asyncio
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from agents.verification import Run
from app.verification.cgroups import PROC, CgroupUnavailable, RunGroup, RunGroups
from app.verification.mounts import launcher, layered, mounts, shows_copy_at
from app.verification.process import InfoPipe, new_marker, run_bounded
from app.verification.runner import Limits, Place, environment
from policies.errors import TiebreakError

NOBODY = 65534
HOME = Path("/tmp")
JOIN = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit; shift; n=$((n - 1)); done; '
    'exec "$@"'
)
"""Run by `/bin/sh -c` with how many `cgroup.procs` files follow, then them, then the
command: the shell joins each group, then becomes the command (bubblewrap), whose every
process is then counted there."""
ROOT_NAMESPACES = (
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
)
"""Root's sandbox: all of `--unshare-all` but the user namespace, which would map only root
and leave `setpriv` no uid to drop to; `unshare --user` makes one after the drop."""
USER_NAMESPACES = ("--unshare-all", "--unshare-user", "--disable-userns")
TRIAL_TIMEOUT_S = 30.0
INSTALL = "install bubblewrap (`apt-get install bubblewrap` on Debian and Ubuntu)"
CONTAINERS = (
    "In a container, bubblewrap needs it to allow namespaces and mounts: as root, the "
    "CAP_SYS_ADMIN capability; as another user, unprivileged user namespaces (Docker's "
    "default seccomp profile forbids both)."
)
NO_SANDBOX = (
    "Or run the tests without a sandbox (--no-sandbox), trusting every test the tester writes."
)
NO_MEMORY_LIMIT = (
    "Or run the tests in the sandbox without a memory limit on the whole run "
    "(--no-memory-limit): each process is then held to memory_mb of address space, but not "
    "all of them together, nor their files in memory."
)


class SandboxUnavailable(TiebreakError):
    """Findings' tests cannot run in a sandbox on this machine: `reason` says why and how to
    make one. Verification is refused then, unless a person asks for no sandbox."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Bwrap:
    """Runs commands in bubblewrap's sandbox (see the module's docstring), each run in a
    cgroup of its own made under `groups` (None: no cgroup, as `--no-memory-limit` asks)."""

    def __init__(
        self, binary: str = "bwrap", user: int = NOBODY, groups: RunGroups | None = None
    ) -> None:
        self.binary = binary
        self.user = user
        self.groups = groups
        self._root = os.geteuid() == 0

    @property
    def owner(self) -> int | None:
        return self.user if self._root else None

    def sees_copy_at(self, path: Path) -> bool:
        return shows_copy_at(path)

    async def run(self, command: str, place: Place, limits: Limits) -> Run:
        try:
            group = self._group(limits)
        except OSError as exc:
            return Run(error=f"its cgroup could not be made: {exc.strerror or exc}")
        info = InfoPipe()
        marker = new_marker()
        try:
            run = await run_bounded(
                [*_joining(group), *self.argv(command, place, limits, marker, info.write_fd)],
                cwd=Path("/"),
                env={},
                timeout_s=limits.timeout_s,
                marker=marker,
                info=info,
            )
            if group is not None and group.out_of_memory():
                why = f"it ran out of memory (its limit is {limits.memory_mb} MB)"
                return run.model_copy(update={"exit_code": None, "error": why})
            return run
        finally:
            info.close()
            if group is not None:
                await asyncio.to_thread(group.remove)

    def argv(
        self, command: str, place: Place, limits: Limits, marker: str, info_fd: int | None
    ) -> list[str]:
        """bubblewrap's command line for one run (the cgroup joined before it)."""
        args = [self.binary, *(ROOT_NAMESPACES if self._root else USER_NAMESPACES)]
        if not self._root:
            args += ["--uid", str(self.user), "--gid", str(self.user)]
        args += ["--die-with-parent", "--new-session", "--clearenv"]
        for name, value in environment(HOME, place.venv, place.tools).items():
            args += ["--setenv", name, value]
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        args += [*mounts(place, limits), "--chdir", "/", "--"]
        if self._root:
            args += [
                *layered(place),
                *("setpriv", f"--reuid={self.user}", f"--regid={self.user}", "--clear-groups"),
                *("--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"),
                *("unshare", "--user", "--map-current-user", "--"),
            ]
        bounds = limits.prlimit(processes=True, address_space=self.groups is None)
        return [*args, *bounds, *launcher(command, place, marker)]

    def _group(self, limits: Limits) -> RunGroup | None:
        if self.groups is None:
            return None
        return self.groups.make(limits.memory_mb, limits.processes)

    def problem(self) -> str | None:
        """Why this sandbox cannot run here, and how to make it, or None."""
        return self.tools_problem() or self.trial_problem()

    def tools_problem(self) -> str | None:
        """What the sandbox needs that this machine lacks, and how to get it, or None."""
        if shutil.which(self.binary) is None:
            return f"bubblewrap ({self.binary}) is not installed: {INSTALL}. {NO_SANDBOX}"
        tools = ("setpriv", "unshare", "prlimit") if self._root else ("prlimit",)
        if missing := [tool for tool in tools if shutil.which(tool) is None]:
            return f"{', '.join(missing)} not found: install util-linux. {NO_SANDBOX}"
        if reason := _user_namespaces_problem():
            return f"{reason} {NO_SANDBOX}"
        return None

    def trial_problem(self) -> str | None:
        """Why a trial run (`exit 0`, in a cgroup if the runs have one) failed, or None."""
        marker = new_marker()
        limits = Limits()
        try:
            group = self._group(limits)
        except OSError as exc:
            return f"a run's cgroup cannot be made here: {exc}. {NO_MEMORY_LIMIT}"
        place = Place(work=Path(tempfile.gettempdir(), "tiebreak-trial", "work"))
        argv = [*_joining(group), *self.argv("exit 0", place, limits, marker, None)]
        try:
            ran = subprocess.run(
                argv, cwd="/", env={}, capture_output=True, timeout=TRIAL_TIMEOUT_S
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap could not be run: {exc}. {NO_SANDBOX}"
        finally:
            if group is not None:
                group.remove()
        output = (ran.stdout + ran.stderr).decode(errors="replace").strip()
        if ran.returncode == 0 and marker in output:
            return None
        # Joining the run's cgroup is the trial's too: its failure may be the cgroup's.
        without = f" {NO_MEMORY_LIMIT}" if group is not None else ""
        return (
            f"bubblewrap cannot make a sandbox here ({output or ran.returncode}). "
            f"{CONTAINERS} {NO_SANDBOX}{without}"
        )


def sandboxed(binary: str = "bwrap", *, memory_limit: bool = True, proc: Path = PROC) -> Bwrap:
    """bubblewrap's runner, each run in a cgroup of its own (unless `memory_limit` is off),
    once a trial run made a sandbox; else raise :class:`SandboxUnavailable`. `proc` is where
    the process's cgroups are read."""
    if (problem := Bwrap(binary).tools_problem()) is not None:
        raise SandboxUnavailable(problem)
    groups = None
    if memory_limit:
        try:
            groups = RunGroups.find(proc)
        except CgroupUnavailable as exc:
            raise SandboxUnavailable(
                f"no memory limit can hold a test's run here: {exc.reason}. {NO_MEMORY_LIMIT}"
            ) from exc
    runner = Bwrap(binary, groups=groups)
    if (problem := runner.trial_problem()) is not None:
        raise SandboxUnavailable(problem)
    return runner


def sandbox_problem(
    binary: str = "bwrap", *, memory_limit: bool = True, proc: Path = PROC
) -> str | None:
    """Why findings' tests cannot run in a sandbox on this machine (with a memory limit on
    each run, unless `memory_limit` is off), and how to fix it; None when they can (a trial
    run made one)."""
    try:
        sandboxed(binary, memory_limit=memory_limit, proc=proc)
    except SandboxUnavailable as exc:
        return exc.reason
    return None


def _joining(group: RunGroup | None) -> list[str]:
    """The argv prefix that joins `group` before what follows runs (none without a group)."""
    if group is None:
        return []
    procs = [str(path) for path in group.procs]
    return ["/bin/sh", "-c", JOIN, "sh", str(len(procs)), *procs]


def _user_namespaces_problem() -> str | None:
    knobs = {
        "kernel/unprivileged_userns_clone": "sysctl -w kernel.unprivileged_userns_clone=1",
        "user/max_user_namespaces": "sysctl -w user.max_user_namespaces=10000",
    }
    for knob, fix in knobs.items():
        try:
            value = Path("/proc/sys", knob).read_text().strip()
        except OSError:
            continue
        if value == "0":
            return f"This kernel forbids user namespaces ({knob} is 0): `{fix}`."
    return None
