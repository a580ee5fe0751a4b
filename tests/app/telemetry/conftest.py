"""The root logger as a test found it, restored after a test that configures logging."""

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture
def root() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    google = logging.getLogger("google")
    google_state = google.level, google.propagate
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)
    google.setLevel(google_state[0])
    google.propagate = google_state[1]
    logging.captureWarnings(False)
