"""Running one command in one directory in bubblewrap's sandbox, isolated and bounded.

What a run sees and may do:

* **Isolated**: its own network (only `lo`: nothing outside answers, not even the host's own
  `127.0.0.1`), its own PIDs (every process dies with the sandbox), IPC and hostname; an
  environment cleared down to `PATH`, `HOME`, `TMPDIR` and `LANG`.
* **Read-only**: the host's file system, except what is hidden (empty and read-only): the
  home directories (`/root`, `/home` and Tiebreak's user's own, wherever it is), `/run`, the
  host's `/tmp`, and the caller's :attr:`Place.hidden` (the checkout under review, the
  review's other trees; a hidden file cannot be opened). Put back read-only, because the
  command needs them: Tiebreak's Python (`sys.base_prefix`, `sys.prefix`, its `bin` first on
  the `PATH`) and the checkout's environments (:attr:`Place.read_only`) with their
  interpreters.
* **Writable**: its copy (the working directory), and `/tmp` and `/dev/shm`, its own, in
  memory, each at most `memory_mb`, gone when it ends.
* **As nobody** (uid 65534). Tiebreak as root drops there with `setpriv` (no groups, no
  capabilities, no new privileges) and enters a user namespace of its own, in which the
  kernel counts the run's processes apart from every other run's. Tiebreak as another user
  cannot change its uid: bubblewrap's user namespace maps that uid to 65534 inside, which
  counts processes per sandbox the same way, but files are then read with Tiebreak's user's
  rights: what that user may read and is not hidden, a test may read.
* **Bounded** (`prlimit`, hard limits): address space, processes, file size, open files, no
  core dumps; and the wall clock, past which the sandbox's init is killed, ending all.
"""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from agents.verification import Run
from app.verification.process import InfoPipe, launch, new_marker, run_bounded
from app.verification.runner import MB, Limits, Place, environment, interpreters
from policies.errors import TiebreakError

NOBODY = 65534
HOME = Path("/tmp")
HIDDEN = (Path("/root"), Path("/home"), Path("/run"))
"""Hidden from every run: where people and services keep their keys."""
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


class SandboxUnavailable(TiebreakError):
    """Findings' tests cannot run in a sandbox on this machine: `reason` says why and how to
    make one. Verification is refused then, unless a person asks for no sandbox."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Bwrap:
    """Runs commands in bubblewrap's sandbox (see the module's docstring)."""

    def __init__(self, binary: str = "bwrap", user: int = NOBODY) -> None:
        self.binary = binary
        self.user = user
        self._root = os.geteuid() == 0

    @property
    def owner(self) -> int | None:
        return self.user if self._root else None

    async def run(self, command: str, place: Place, limits: Limits) -> Run:
        for _, seen in place.read_only:
            if seen.is_relative_to(place.work):
                _mount_point(seen)
        info = InfoPipe()
        marker = new_marker()
        try:
            return await run_bounded(
                self.argv(command, place, limits, marker, info.write_fd),
                cwd=place.work,
                env={},
                timeout_s=limits.timeout_s,
                marker=marker,
                info=info,
            )
        finally:
            info.close()

    def argv(
        self, command: str, place: Place, limits: Limits, marker: str, info_fd: int | None
    ) -> list[str]:
        """bubblewrap's command line for one run."""
        args = [self.binary, *(ROOT_NAMESPACES if self._root else USER_NAMESPACES)]
        if not self._root:
            args += ["--uid", str(self.user), "--gid", str(self.user)]
        args += ["--die-with-parent", "--new-session", "--clearenv"]
        for name, value in environment(HOME).items():
            args += ["--setenv", name, value]
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        args += [*_mounts(place, limits), "--chdir", str(place.work.resolve()), "--"]
        if self._root:
            args += [
                *("setpriv", f"--reuid={self.user}", f"--regid={self.user}", "--clear-groups"),
                *("--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"),
                *("unshare", "--user", "--map-current-user", "--"),
            ]
        return [*args, *limits.prlimit(processes=True), *launch(command, marker)]

    def problem(self) -> str | None:
        """Why this sandbox cannot run here, and how to make it, or None."""
        if shutil.which(self.binary) is None:
            return f"bubblewrap ({self.binary}) is not installed: {INSTALL}. {NO_SANDBOX}"
        tools = ("setpriv", "unshare", "prlimit") if self._root else ("prlimit",)
        if missing := [tool for tool in tools if shutil.which(tool) is None]:
            return f"{', '.join(missing)} not found: install util-linux. {NO_SANDBOX}"
        if reason := _user_namespaces_problem():
            return f"{reason} {NO_SANDBOX}"
        return self._trial()

    def _trial(self) -> str | None:
        marker = new_marker()
        with tempfile.TemporaryDirectory(prefix="tiebreak-trial-") as directory:
            work = Path(directory)
            if self.owner is not None:
                os.chown(work, self.owner, self.owner)
            argv = self.argv("exit 0", Place(work=work), Limits(), marker, None)
            try:
                ran = subprocess.run(
                    argv, cwd=work, env={}, capture_output=True, timeout=TRIAL_TIMEOUT_S
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"bubblewrap could not be run: {exc}. {NO_SANDBOX}"
        output = (ran.stdout + ran.stderr).decode(errors="replace").strip()
        if ran.returncode == 0 and marker in output:
            return None
        return (
            f"bubblewrap cannot make a sandbox here ({output or ran.returncode}). "
            f"{CONTAINERS} {NO_SANDBOX}"
        )


def sandboxed(binary: str = "bwrap") -> Bwrap:
    """bubblewrap's runner, once a trial run made a sandbox; else raise
    :class:`SandboxUnavailable`."""
    runner = Bwrap(binary)
    if (problem := runner.problem()) is not None:
        raise SandboxUnavailable(problem)
    return runner


def sandbox_problem(binary: str = "bwrap") -> str | None:
    """Why findings' tests cannot run in a sandbox on this machine, and how to fix it; None
    when they can (a trial run made one)."""
    return Bwrap(binary).problem()


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


def _mounts(place: Place, limits: Limits) -> list[str]:
    """The sandbox's file system, in bubblewrap's order: later mounts go over earlier ones."""
    work = place.work.resolve()
    covered = [HOME, *HIDDEN, *_own_home(), *(p.resolve() for p in place.hidden)]
    size = str(limits.memory_mb * MB)
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += ["--perms", "1777", "--size", size, "--tmpfs", str(HOME)]
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
    emptied = []
    for hidden in covered[1:]:
        if hidden.is_dir():
            args += [*_directories(hidden, covered), "--tmpfs", str(hidden)]
            emptied.append(str(hidden))
        elif hidden.exists():
            # A device on a mount without devices: opening it is refused.
            args += [*_directories(hidden, covered), "--ro-bind", "/dev/null", str(hidden)]
    for prefix in interpreters():
        if _under(prefix, covered):
            args += [*_directories(prefix, covered), "--ro-bind", str(prefix), str(prefix)]
    args += [*_directories(work, covered), "--bind", str(work), str(work)]
    for source, seen in place.read_only:
        seen = seen.resolve()
        if seen.is_relative_to(work) or _under(seen, covered):
            args += [*_directories(seen, covered), "--ro-bind", str(source.resolve()), str(seen)]
    # Last, once what is mounted inside them is: a hidden directory takes no writes either.
    for hidden_directory in emptied:
        args += ["--remount-ro", hidden_directory]
    return args


def _own_home() -> tuple[Path, ...]:
    """Tiebreak's user's home, wherever it is (a service's is often under /var/lib)."""
    home = Path(os.path.expanduser("~"))
    if not home.is_absolute():  # a user without a home: "~" is left as it is
        return ()
    home = home.resolve()
    return () if home == Path("/") else (home,)


def _under(path: Path, covered: list[Path]) -> bool:
    return any(path.is_relative_to(c) for c in covered)


def _directories(destination: Path, covered: list[Path]) -> list[str]:
    """Readable directories down to `destination` where they are hidden: bubblewrap would
    make them readable by root alone, and nobody could reach what is mounted there."""
    args: list[str] = []
    for ancestor in reversed(destination.parents):
        if any(ancestor != c and ancestor.is_relative_to(c) for c in covered):
            args += ["--perms", "0755", "--dir", str(ancestor)]
    return args


def _mount_point(path: Path) -> None:
    """An empty directory to mount on, never a symlink a tree's setup left there."""
    try:
        path.mkdir()
    except FileExistsError:
        if path.is_symlink() or not path.is_dir():
            path.unlink()
            path.mkdir()
