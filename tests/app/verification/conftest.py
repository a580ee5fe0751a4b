"""The sandbox the verification tests run in: bubblewrap, for real.

Without bubblewrap on the machine, those tests are skipped, saying so; with bubblewrap
installed but unable to make a sandbox (user namespaces forbidden, a container without the
rights, no cgroup to hold a run's memory), they fail with the reason: they never pass without
having run.
"""

import shutil
from pathlib import Path

import pytest

from app.verification.environments import ProjectPython
from app.verification.sandbox import Bwrap, SandboxUnavailable, sandboxed
from tests.scenarios.environments import without_pytest
from tests.scenarios.shop import Project, make_project

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="no bubblewrap on this machine: install Debian's bubblewrap package (.ci/run does)",
)


@pytest.fixture(scope="session")
def sandbox() -> Bwrap:
    """The sandbox as `tiebreak review --verify` makes it: each run in a cgroup of its own."""
    try:
        return sandboxed()
    except SandboxUnavailable as exc:
        pytest.fail(f"bubblewrap is installed but cannot make a sandbox here: {exc.reason}")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path)


@pytest.fixture(scope="session")
def project_python(tmp_path_factory: pytest.TempPathFactory) -> ProjectPython:
    """The Python of the runs that are of no project's tree: a project holding only its
    virtual environment, with nothing installed (see :func:`tests.kits.project.place`)."""
    root = tmp_path_factory.mktemp("python-project")
    without_pytest(root)
    return ProjectPython.of(root)
