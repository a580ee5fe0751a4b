"""The sandbox the verification tests run in: bubblewrap, for real.

Without bubblewrap on the machine, those tests are skipped, saying so; with bubblewrap
installed but unable to make a sandbox (user namespaces forbidden, a container without the
rights), they fail with the reason: they never pass without having run.
"""

import shutil
from pathlib import Path

import pytest

from app.verification.sandbox import Bwrap, sandbox_problem
from tests.scenarios.shop import Project, make_project

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="no bubblewrap on this machine: install Debian's bubblewrap package (.ci/run does)",
)


@pytest.fixture(scope="session")
def sandbox() -> Bwrap:
    if (problem := sandbox_problem()) is not None:
        pytest.fail(f"bubblewrap is installed but cannot make a sandbox here: {problem}")
    return Bwrap()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path)
