"""What a test run makes once for all its tests, every xdist worker of the run included: a
directory made by the first worker to ask for it, under a file lock the others wait on."""

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

MADE = ".made"
"""Written in a directory once it is whole: one whose making was cut short is made again."""


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The run's directory `name`, made (new) by `make` if no worker of the run has made it."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Each worker's base is a directory of the run's own base, which they share.
        root = root.parent
    directory = root / name
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (directory / MADE).is_file():
            shutil.rmtree(directory, ignore_errors=True)
            make(directory)
            (directory / MADE).touch()
    return directory
