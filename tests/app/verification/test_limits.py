"""Each limit of a run holds in bubblewrap's sandbox, and the run cannot raise it: root is
exempt from none of them there, as the run is nobody."""

import os
import shlex
from pathlib import Path

import pytest

from app.verification.environments import ProjectPython
from app.verification.runner import Limits, Place
from app.verification.sandbox import Bwrap, sandboxed
from tests.app.verification.conftest import needs_bwrap
from tests.kits.project import place, work_for
from tests.scenarios.polyglot import GO_CART_BASE, GO_MOD, GO_OWN_TEST, needs_go

ADDRESS_SPACE_CHECK = (
    "import resource\n"
    "try: bytearray(512 * 1024 * 1024)\n"
    "except MemoryError: print('held')\n"
    "raise_to = resource.RLIMIT_AS"
)
LIMIT_CHECKS = {
    "processes": (
        Limits(processes=16),
        "import os, resource, time\n"
        "children = []\n"
        "try:\n"
        "    while len(children) < 100:\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        children.append(pid)\n"
        "except OSError:\n"
        "    print('held' if len(children) < 16 else f'{len(children)} forks')\n"
        "for pid in children: os.kill(pid, 9)\n"
        "raise_to = resource.RLIMIT_NPROC",
    ),
    "file size": (
        Limits(file_mb=1),
        "import resource\n"
        "try: open('big', 'wb').write(b'x' * 2 * 1024 * 1024)\n"
        "except OSError: print('held')\n"
        "raise_to = resource.RLIMIT_FSIZE",
    ),
    "open files": (
        Limits(open_files=64),
        "import resource\n"
        "files = []\n"
        "try:\n"
        "    while len(files) < 1000: files.append(open('/dev/null'))\n"
        "except OSError: print('held' if len(files) < 64 else 'not held')\n"
        "raise_to = resource.RLIMIT_NOFILE",
    ),
    "core dumps": (
        Limits(),
        "import resource\n"
        "print('held' if resource.getrlimit(resource.RLIMIT_CORE) == (0, 0) else 'not held')\n"
        "raise_to = resource.RLIMIT_CORE",
    ),
}
RAISE = (
    "\nsoft, hard = resource.getrlimit(raise_to)\n"
    "try: resource.setrlimit(raise_to, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
    "except (ValueError, OSError): print('and stays')\n"
)


@needs_bwrap
@pytest.mark.parametrize("name", list(LIMIT_CHECKS))
async def test_each_limit_holds_and_cannot_be_raised(
    sandbox: Bwrap, project_python: ProjectPython, name: str, tmp_path: Path
) -> None:
    limits, check = LIMIT_CHECKS[name]
    work = work_for(sandbox, tmp_path)

    run = await sandbox.run(
        shlex.join(["python", "-c", check + RAISE]), place(project_python, work), limits
    )

    assert run.passed, run
    assert run.output_tail.splitlines()[-2:] == ["held", "and stays"]


@needs_bwrap
async def test_where_no_cgroup_holds_a_run_each_process_is_held_to_its_memory_in_address_space(
    project_python: ProjectPython, tmp_path: Path
) -> None:
    """`--no-memory-limit`: the address space is then the only bound on a process's memory."""
    sandbox = sandboxed(memory_limit=False)
    work = work_for(sandbox, tmp_path)
    check = shlex.join(["python", "-c", ADDRESS_SPACE_CHECK + RAISE])

    run = await sandbox.run(check, place(project_python, work), Limits(memory_mb=256))

    assert run.passed, run
    assert run.output_tail.splitlines()[-2:] == ["held", "and stays"]


@needs_bwrap
async def test_a_run_its_cgroup_holds_may_reserve_more_address_space_than_its_memory(
    sandbox: Bwrap, project_python: ProjectPython, tmp_path: Path
) -> None:
    """Runtimes reserve address space they never use (Go's heap arenas, each thread's stack):
    where the cgroup bounds what is used, the reservation is not refused."""
    reserve = (
        "import mmap\n"
        "reserved = mmap.mmap(-1, 1024 * 1024 * 1024, flags=mmap.MAP_PRIVATE, "
        "prot=mmap.PROT_READ)\n"
        "print(f'reserved {len(reserved) // 1024 // 1024} MB')\n"
    )
    work = work_for(sandbox, tmp_path)

    run = await sandbox.run(
        shlex.join(["python", "-c", reserve]), place(project_python, work), Limits(memory_mb=128)
    )

    assert run.passed, run
    assert run.output_tail.splitlines()[-1] == "reserved 1024 MB"


@needs_bwrap
@needs_go
async def test_a_go_modules_tests_run_within_a_memory_limit_below_what_the_go_tool_reserves(
    sandbox: Bwrap, tmp_path: Path
) -> None:
    """The go tool reserves ≈0.8–1.3 GB of address space to use about 100 MB: held to 1 GB of
    it, it crashed now and then starting a thread (`pthread_create failed`, a register dump),
    and held to 512 MB it could not start at all."""
    tree = work_for(sandbox, tmp_path)
    (tree / "go.mod").write_text(GO_MOD)
    (tree / "shop").mkdir()
    (tree / "shop" / "cart.go").write_text(GO_CART_BASE)
    (tree / "shop" / "cart_test.go").write_text(GO_OWN_TEST)
    if sandbox.owner is not None:
        for path in tree.rglob("*"):
            os.chown(path, sandbox.owner, sandbox.owner)

    run = await sandbox.run(
        "go test -count=1 ./shop", Place(tmp_path / "run", tree=tree), Limits(memory_mb=512)
    )

    assert run.passed, run
    assert run.output_tail.split()[:2] == ["ok", "example.com/shop/shop"]


HOLDS = (
    "import os, time\n"
    "for _ in range({processes}):\n"
    "    if os.fork() == 0:\n"
    "        held = b'x' * ({each} * 1024 * 1024)\n"
    "        time.sleep(30)\n"
    "        os._exit(0)\n"
    "{files}"
    "os.wait()\n"
)
WRITES = (
    "for where in ['/tmp', '/dev/shm']:\n"
    "    with open(where + '/held', 'wb') as file:\n"
    "        file.write(b'x' * ({each} * 1024 * 1024))\n"
)


@needs_bwrap
@pytest.mark.parametrize(
    "held",
    [
        HOLDS.format(processes=4, each=60, files=""),
        HOLDS.format(processes=1, each=20, files=WRITES.format(each=60)),
    ],
    ids=["processes", "files in memory"],
)
async def test_the_memory_of_a_whole_run_is_bounded_and_a_run_past_it_says_so(
    sandbox: Bwrap, project_python: ProjectPython, held: str, tmp_path: Path
) -> None:
    limits = Limits(memory_mb=128, timeout_s=30)
    shown = place(project_python, tmp_path / "copy")

    run = await sandbox.run(shlex.join(["python", "-c", held]), shown, limits)

    assert run.error == "it ran out of memory (its limit is 128 MB)"
    assert run.exit_code is None
    assert sandbox.groups is not None
    # The run's group is gone (named with this process's id: another process's runs may be
    # going on beside it).
    mine = f"run-{os.getpid()}-*"
    assert [list(parent.glob(mine)) for parent in sandbox.groups.parents] == [
        [] for _ in sandbox.groups.parents
    ]


@needs_bwrap
async def test_a_tree_larger_than_the_runs_disk_is_run_in_and_its_writes_stay_bounded(
    sandbox: Bwrap, tmp_path: Path
) -> None:
    tree = work_for(sandbox, tmp_path)
    with (tree / "large").open("wb") as file:
        file.truncate(40 * 1024 * 1024)
        os.posix_fallocate(file.fileno(), 0, 40 * 1024 * 1024)
    (tree / "kept.txt").write_text("as the review made it\n")
    for name in ("large", "kept.txt"):
        if sandbox.owner is not None:
            os.chown(tree / name, sandbox.owner, sandbox.owner)
    # The run reads the tree, changes and removes its files, then tries to fill its disk.
    writes = (
        "wc -c < large; echo changed > kept.txt && cat kept.txt; rm large && echo removed; "
        "head -c 40000000 /dev/zero > fill 2>/dev/null && echo not held || echo held"
    )

    run = await sandbox.run(writes, Place(tmp_path / "copy", tree=tree), Limits(disk_mb=32))

    assert run.passed, run
    assert run.output_tail.split() == [str(40 * 1024 * 1024), "changed", "removed", "held"]
    assert (tree / "kept.txt").read_text() == "as the review made it\n"
    assert (tree / "large").stat().st_size == 40 * 1024 * 1024
    assert sorted(os.listdir(tree)) == ["kept.txt", "large"]
