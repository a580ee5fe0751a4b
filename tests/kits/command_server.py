"""`tiebreak` processes forked from one that has already loaded the command's modules.

Each `tiebreak` a test runs as a person runs it would spend most of its second loading the
same modules again (the model's SDK alone, about 3,000 of them, takes over a second). This
server loads them once per test process, then forks a process for each run it is asked for:
that process takes the run's standard streams, working directory, environment and arguments,
and goes on exactly as the installed script goes on (`sys.exit(main())`), as `__main__` with
the script's `__file__`, ending as a process ends (its threads joined, its `atexit` hooks
run). Only the loading is shared; nothing has run yet when it forks.

The server is this file run as a script, with the path of its Unix socket: one request a
connection (a message holding the arguments, working directory and environment, with the
three streams' descriptors), answered by the process's pid, then its return code once it
has ended. It ends when its standard input closes (the test process is gone).

What a run's start must not load is tested on fresh interpreters (tests/app/cli/
test_startup.py), never here.
"""

import contextlib
import json
import os
import selectors
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

PACKAGES = ("app", "agents", "policies")
"""Every module of these is loaded before the server forks: all the command may import."""

Request = dict[str, Any]


def _load(script: Path) -> Callable[[], None]:
    """The script's entry point, once every module it may load is loaded."""
    import gc
    import importlib
    import pkgutil
    import threading

    sys.path[0] = str(script.parent)  # as the script's own run has it
    from app.cli import main  # before its package's `main` module is loaded over it

    for name in PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            importlib.import_module(module.name)
    import anthropic  # noqa: F401  (loaded lazily by the commands that call the model)

    if threading.active_count() != 1:  # a fork copies no thread but the one forking
        raise RuntimeError(f"loading started threads: {threading.enumerate()}")
    # What is loaded is left out of the collector's passes: each forked process would
    # otherwise copy every page it visits (its exit took 0.8 s, 0.1 s so).
    gc.freeze()
    return main


def _serve(listener: socket.socket) -> tuple[Request, list[int]]:
    """Answer requests until standard input closes; in each forked process, return its
    request and its streams' descriptors."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, None)
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, connection)
    while True:
        for key, _ in selector.select():
            if key.fd == sys.stdin.fileno():
                if not os.read(key.fd, 4096):
                    sys.exit(0)
            elif key.fileobj is listener:
                connection, _ = listener.accept()
                message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
                if len(fds) != 3:  # a test process gone before it asked
                    for fd in fds:
                        os.close(fd)
                    connection.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    listener.close()
                    connection.close()
                    for pidfd, (_, other) in running.items():
                        os.close(pidfd)
                        other.close()
                    return json.loads(message), fds
                for fd in fds:
                    os.close(fd)
                with contextlib.suppress(OSError):
                    connection.send(json.dumps({"pid": pid}).encode())
                pidfd = os.pidfd_open(pid)
                running[pidfd] = (pid, connection)
                selector.register(pidfd, selectors.EVENT_READ, None)
            else:
                pid, connection = running.pop(key.fd)
                selector.unregister(key.fd)
                os.close(key.fd)
                returncode = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
                with contextlib.suppress(OSError):  # the test gave up on the run (its timeout)
                    connection.send(json.dumps({"returncode": returncode}).encode())
                connection.close()


def _become(script: Path, request: Request, fds: list[int]) -> None:
    """This process made the run `request` asks for, as the script starts it."""
    import tempfile

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # found again from the run's environment
    sys.argv = [str(script), *request["args"]]
    main = sys.modules["__main__"]
    main.__file__ = str(script)


if __name__ == "__main__":
    SCRIPT = Path(sys.executable).with_name("tiebreak")
    MAIN = _load(SCRIPT)
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as LISTENER:
        LISTENER.bind(sys.argv[1])
        LISTENER.listen()
        print("ready", flush=True)
        REQUEST, FDS = _serve(LISTENER)
    _become(SCRIPT, REQUEST, FDS)
    del LISTENER, REQUEST, FDS
    # From here on, this process is the script's.
    sys.exit(MAIN())
