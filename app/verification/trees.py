"""The trees a review's tests run in, on disk: the head and the base, and each run's copy.

* The head is a copy of the checkout as it is: the files git tracks and the untracked files
  it does not ignore, symlinks as symlinks; never `.git`, nor a nested repository.
* The base is the tree of a base ref (written out by git, through an index of its own), or
  the head with the diff applied in reverse
  (`git apply -R`, the diff given on standard input, outside any repository: git refuses
  paths that climb out of the tree or go through a symlink).
* Each run gets its own copy of one of them (`cp -a`), owned by the sandbox's user, removed
  after it: no run sees what another left.

The checkout's environments that git ignores (`.venv`, `venv`) are not copied: a run sees
them read-only, where they are in the copy, with the interpreter they were made from.
"""

import asyncio
import os
import shutil
import stat
import subprocess
from pathlib import Path

from policies.errors import TiebreakError

ENVIRONMENTS = (".venv", "venv")
GIT_TIMEOUT_S = 300.0


class TreeRefused(TiebreakError):
    """A tree could not be made, or a file not written in one: the runs there are broken,
    for `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def copy_checkout(checkout: Path, destination: Path) -> None:
    """`destination` (new) made a copy of the work tree at `checkout` as it is."""
    listed = await _git(
        "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=checkout
    )
    names = sorted({n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n})
    await asyncio.to_thread(_copy_files, checkout, names, destination)


async def archive(checkout: Path, ref: str, destination: Path) -> None:
    """`destination` (new) made the tree of `ref` in the repository at `checkout`: read into
    an index of its own (the checkout's is left alone) and written out by git."""
    index = destination.with_name(destination.name + ".index")
    env = {"GIT_INDEX_FILE": str(index)}
    await asyncio.to_thread(destination.mkdir)
    try:
        await _git("read-tree", "--end-of-options", ref, cwd=checkout, env=env)
        await _git("checkout-index", "--all", f"--prefix={destination}/", cwd=checkout, env=env)
    finally:
        await asyncio.to_thread(index.unlink, missing_ok=True)


async def unapply(diff: str, tree: Path) -> None:
    """`diff` applied in reverse to `tree`, which must be at its new side."""
    # No repository above the tree is looked for: `git apply` must patch files, not an index.
    env = {"GIT_CEILING_DIRECTORIES": str(tree.parent)}
    await _git("apply", "-R", "--whitespace=nowarn", cwd=tree, env=env, stdin=diff.encode())


async def copy_tree(source: Path, destination: Path) -> None:
    """`destination` (new) made a copy of `source`, owners, modes and symlinks kept."""
    argv = ("cp", "-a", "--no-target-directory", "--", str(source), str(destination))
    code, _, err = await _command(argv, cwd=None, env=None, stdin=None)
    if code:
        raise TreeRefused(f"the tree could not be copied: {_last_line(err)}")


def own(tree: Path, owner: int | None) -> None:
    """`tree` and all in it given to `owner` (None: left to Tiebreak's user)."""
    if owner is None:
        return
    os.lchown(tree, owner, owner)
    for directory, names, files in os.walk(tree):
        for name in [*names, *files]:
            os.lchown(os.path.join(directory, name), owner, owner)


def environments(checkout: Path) -> tuple[tuple[Path, Path], ...]:
    """The checkout's environments a copy does not carry (git ignores them), each with where
    a run sees it: relative, inside its copy; and the interpreter each was made from, seen
    where it is (absolute)."""
    found: list[tuple[Path, Path]] = []
    for name in ENVIRONMENTS:
        path = checkout / name
        if not path.is_dir() or not _ignored(checkout, name):
            continue
        found.append((path, Path(name)))
        if (home := _interpreter(path)) is not None:
            found.append((home, home))
    return tuple(found)


def remove_tree(tree: Path) -> None:
    """`tree` gone, whatever a run did to its modes."""
    if not tree.is_symlink() and tree.is_dir():
        for directory, names, _ in os.walk(tree):
            for name in names:
                path = os.path.join(directory, name)
                # A test may have locked its own directories; a symlink is not followed.
                if not os.path.islink(path):
                    os.chmod(path, 0o700)
    shutil.rmtree(tree, ignore_errors=False)


def _copy_files(checkout: Path, names: list[str], destination: Path) -> None:
    destination.mkdir()
    root = destination.resolve()
    for name in names:
        if name.endswith("/"):
            continue  # an untracked repository inside the work tree: not the project's
        source = checkout / name
        try:
            mode = source.lstat().st_mode
        except FileNotFoundError:
            continue  # tracked, but deleted in the work tree
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.parent.resolve().is_relative_to(root):
            continue  # under a symlink copied before: git lists no such file, none is written
        if stat.S_ISLNK(mode):
            target.symlink_to(os.readlink(source))
        elif stat.S_ISREG(mode):
            shutil.copy2(source, target, follow_symlinks=False)
        # Anything else (a submodule's directory, a fifo) is not copied.


async def _git(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> bytes:
    git_env = {**os.environ, "LC_ALL": "C", **(env or {})}
    try:
        code, out, err = await _command(("git", *args), cwd=cwd, env=git_env, stdin=stdin)
    except TimeoutError as exc:
        raise TreeRefused(f"git {args[0]} took over {GIT_TIMEOUT_S:g} s") from exc
    if code:
        raise TreeRefused(f"git {args[0]} failed: {_last_line(err)}")
    return out


async def _command(
    argv: tuple[str, ...], *, cwd: Path | None, env: dict[str, str] | None, stdin: bytes | None
) -> tuple[int, bytes, bytes]:
    """`argv`'s exit code, output and errors; past :data:`GIT_TIMEOUT_S` a TimeoutError. The
    process is never left behind: killed and reaped when its wait ends early, by the timeout
    or by the review being cancelled."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(GIT_TIMEOUT_S):
            out, err = await process.communicate(stdin)
    finally:
        if process.returncode is None:
            process.kill()
            await asyncio.shield(process.wait())
    return await process.wait(), out, err


def _ignored(checkout: Path, name: str) -> bool:
    done = subprocess.run(
        ["git", "check-ignore", "-q", "--", name], cwd=checkout, capture_output=True
    )
    return done.returncode == 0


def _interpreter(environment: Path) -> Path | None:
    """The installation a virtual environment's `home` (in `pyvenv.cfg`) points into."""
    try:
        config = (environment / "pyvenv.cfg").read_text(errors="replace")
    except OSError:
        return None
    for line in config.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            prefix = Path(value.strip()).resolve().parent
            return prefix if prefix.is_dir() and prefix != Path("/") else None
    return None


def _last_line(err: bytes) -> str:
    lines = err.decode(errors="replace").strip().splitlines()
    return lines[-1][:500] if lines else "no message"
