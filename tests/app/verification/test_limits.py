"""Each limit of a run holds in bubblewrap's sandbox, and the run cannot raise it: root is
exempt from none of them there, as the run is nobody."""

import shlex
from pathlib import Path

import pytest

from app.verification.runner import Limits, Place
from app.verification.sandbox import Bwrap
from tests.app.verification.conftest import needs_bwrap
from tests.kits.project import work_for

LIMIT_CHECKS = {
    "address space": (
        Limits(memory_mb=256),
        "import resource\n"
        "try: bytearray(512 * 1024 * 1024)\n"
        "except MemoryError: print('held')\n"
        "raise_to = resource.RLIMIT_AS",
    ),
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
    sandbox: Bwrap, name: str, tmp_path: Path
) -> None:
    limits, check = LIMIT_CHECKS[name]

    run = await sandbox.run(
        shlex.join(["python", "-c", check + RAISE]), Place(work_for(sandbox, tmp_path)), limits
    )

    assert run.passed, run
    assert run.output_tail.splitlines()[-2:] == ["held", "and stays"]
