"""The trees a review's tests run in, on disk: the head and the base, and each run's copy.

* The head is a copy of the checkout as it is: the files git tracks and the untracked files
  it does not ignore, symlinks as symlinks; never `.git`, nor a nested repository.
* The base is the tree of a base ref (written out by git, through an index of its own), or
  the head with the diff applied in reverse
  (`git apply -R`, the diff given on standard input, outside any repository: git refuses
  paths that climb out of the tree or go through a symlink).
* The head leaves out what Tiebreak keeps inside the checkout and no test may read (its data
  directory, with other repositories' snapshots; its `.env`), even where git does not ignore
  it.
* A tree is owned by the sandbox's user; each run works in a copy of its own, which its
  runner makes (:class:`app.verification.runner.Place`): no run sees what another left.

The checkout's virtual environments (:mod:`app.verification.environments`) are left out of the
copy, whether git ignores them or not: a run sees them read-only, where they are in the copy.
"""

import asyncio
import contextlib
import os
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from policies.errors import TiebreakError

GIT_TIMEOUT_S = 300.0


class TreeRefused(TiebreakError):
    """A tree could not be made, or a file not written in one: the runs there are broken,
    for `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def copy_checkout(checkout: Path, destination: Path, leave_out: Sequence[Path] = ()) -> None:
    """`destination` (new) made a copy of the work tree at `checkout` as it is, without the
    files and directories of `leave_out` that are inside it."""
    listed = await _git(
        "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=checkout
    )
    left_out = _inside(checkout, leave_out)
    names = sorted(
        name
        for name in {n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n}
        if not any(PurePosixPath(name).is_relative_to(out) for out in left_out)
    )
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


async def copy_tree(source: Path, destination: Path, *, over: bool = False) -> None:
    """`destination` (new) made a copy of `source`, owners, modes and symlinks kept; or, `over`
    an existing tree, `source`'s files written over it."""
    force = ("--force",) if over else ()
    argv = ("cp", "-a", *force, "--no-target-directory", "--", str(source), str(destination))
    code, _, err = await _command(argv, cwd=None, env=None, stdin=None)
    if code:
        raise TreeRefused(f"the tree could not be copied: {_last_line(err)}")


def own(tree: Path, owner: int | None) -> None:
    """`tree` and all in it given to `owner` (None: left to Tiebreak's user), however deep:
    the directories left to walk are a list, not Python's stack."""
    if owner is None:
        return
    os.lchown(tree, owner, owner)
    left = [str(tree)]
    while left:
        with os.scandir(left.pop()) as entries:
            for entry in entries:
                os.lchown(entry.path, owner, owner)
                if entry.is_dir(follow_symlinks=False):
                    left.append(entry.path)


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
        _parents(destination, PurePosixPath(name))
        if not target.parent.resolve().is_relative_to(root):
            continue  # under a symlink copied before: git lists no such file, none is written
        if stat.S_ISLNK(mode):
            target.symlink_to(os.readlink(source))
        elif stat.S_ISREG(mode):
            shutil.copy2(source, target, follow_symlinks=False)
        # Anything else (a submodule's directory, a fifo) is not copied.


def _parents(destination: Path, name: PurePosixPath) -> None:
    """The directories above `name` made in `destination`, one at a time: a tree may be
    deeper than `Path.mkdir(parents=True)` recurses."""
    current = destination
    for part in name.parts[:-1]:
        current = current / part
        with contextlib.suppress(FileExistsError):
            current.mkdir()


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


def _inside(checkout: Path, paths: Sequence[Path]) -> list[PurePosixPath]:
    """Those of `paths` strictly inside `checkout`, relative to it."""
    root = checkout.resolve()
    inside = []
    for path in paths:
        resolved = Path(os.path.abspath(path)).resolve()
        if resolved != root and resolved.is_relative_to(root):
            inside.append(PurePosixPath(resolved.relative_to(root).as_posix()))
    return inside


def _last_line(err: bytes) -> str:
    lines = err.decode(errors="replace").strip().splitlines()
    return lines[-1][:500] if lines else "no message"
