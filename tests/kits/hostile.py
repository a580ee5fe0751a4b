"""Findings' tests that attack the machine they run on, as a tester steered by a pull request
could write them: what each one met is what it prints."""

import contextlib
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path

HOLDS_MEMORY = """\
import os, sys, time

children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        held = b"x" * (60 * 1024 * 1024)
        time.sleep(3)
        os._exit(0)
    children.append(pid)
codes = [os.waitpid(pid, 0)[1] for pid in children]
print("held 240 MB in 4 processes" if codes == [0, 0, 0, 0] else f"children ended {codes}")
sys.exit(1)
"""
"""Holds 240 MB in 4 processes of 60 MB each, then fails (a script: `python {test}`)."""

FILLS_THE_DISK = """\
import os, sys

MB = 1024 * 1024
for where in [".", "/tmp", "/dev/shm"]:
    held = 0
    try:
        while held < 2100:
            with open(os.path.join(where, f"filler-{held}"), "wb") as file:
                os.posix_fallocate(file.fileno(), 0, 700 * MB)
            held += 700
        print(where, f"held {held} MB")
    except OSError as exc:
        print(where, f"refused after {held} MB:", exc.strerror)
    for name in os.listdir(where):
        if name.startswith("filler-"):
            os.unlink(os.path.join(where, name))
sys.exit(1)
"""
"""Allocates 2,100 MB in files of 700 MB in its copy, `/tmp` and `/dev/shm`, then fails (a
script)."""


def reaches(file: Path, snapshot: Path, socket_path: Path) -> str:
    """A test that says, for each of the host's paths, whether it could reach it."""
    return (
        "import socket\n\n"
        f"for name, path in [('/var/tmp', {str(file)!r}), ('snapshots', {str(snapshot)!r})]:\n"
        "    try:\n"
        "        print(name, 'read', repr(open(path).read()))\n"
        "    except OSError as exc:\n"
        "        print(name, 'refused:', exc.strerror)\n"
        "client = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        f"    client.connect({str(socket_path)!r})\n"
        "    print('socket connected')\n"
        "except OSError as exc:\n"
        "    print('socket refused:', exc.strerror)\n"
    )


DEEP = """\
import os

from shop.cart import total


def test_total():
    here = os.getcwd()
    for _ in range(1200):
        os.mkdir("d")
        os.chdir("d")
    os.chdir(here)
    assert total([5, 7]) == 12
"""
"""A pytest test of :mod:`tests.scenarios.shop` that makes 1,200 nested directories, then
shows the off-by-one."""


@contextlib.contextmanager
def var_tmp() -> Iterator[Path]:
    """A directory of its own in the host's /var/tmp, which any user may read; removed after."""
    directory = Path("/var/tmp") / f"tiebreak-test-{secrets.token_hex(6)}"
    directory.mkdir()
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        subprocess.run(["rm", "-rf", "--", str(directory)], check=True)
