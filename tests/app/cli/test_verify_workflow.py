"""`tiebreak verify-workflow` prints the workflow a repository adds to run findings' tests."""

import os
import subprocess
import zipfile
from pathlib import Path

import yaml
from click.testing import CliRunner

from app.cli.main import main
from tests.kits.command import tiebreak


def test_the_printed_workflow_is_dispatched_with_the_run_token_as_its_title() -> None:
    printed = CliRunner().invoke(main, ["verify-workflow"])

    assert printed.exit_code == 0
    workflow = yaml.safe_load(printed.output)
    assert workflow["run-name"] == "Tiebreak ${{ inputs.token }}"
    assert "token" in workflow[True]["workflow_dispatch"]["inputs"]


def wheel(folder: Path, name: str) -> None:
    """A wheel of an empty module `name`, as pip installs it from a local folder."""
    dist = f"{name}-1.0.dist-info"
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{name}.py", "")
        archive.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        archive.writestr(
            f"{dist}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr(f"{dist}/RECORD", "")


def project_setup(workspace: Path, setup: str) -> subprocess.CompletedProcess[str]:
    """The printed workflow's "Project setup" step, run as a runner runs it, pip offline on
    the wheels in `workspace/wheels`."""
    printed = tiebreak("verify-workflow")
    assert printed.returncode == 0, printed.stderr
    (step,) = [
        s
        for s in yaml.safe_load(printed.stdout)["jobs"]["test"]["steps"]
        if s["name"] == "Project setup"
    ]
    script = workspace / "setup.sh"
    script.write_text(step["run"])
    (workspace / "temp").mkdir()
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=workspace,
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(workspace),
            "RUNNER_TEMP": str(workspace / "temp"),
            "GITHUB_PATH": str(workspace / "github_path"),
            "TIEBREAK_SETUP": setup,
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(workspace / "wheels"),
        },
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_setup_step_installs_pytest_and_the_projects_test_dependencies(
    tmp_path: Path,
) -> None:
    (tmp_path / "wheels").mkdir()
    for name in ("pytest", "money", "freezegun", "hypothesis", "unused"):
        wheel(tmp_path / "wheels", name)
    head = tmp_path / "head"
    head.mkdir()
    (head / "pyproject.toml").write_text(
        '[project]\nname = "shop"\nversion = "1"\ndependencies = ["money"]\n'
        '[project.optional-dependencies]\ntest = ["freezegun"]\ndocs = ["unused"]\n'
    )
    (head / "requirements-dev.txt").write_text("hypothesis\n")

    done = project_setup(tmp_path, setup="")

    assert done.returncode == 0, done.stdout + done.stderr
    (on_path,) = (tmp_path / "github_path").read_text().splitlines()
    python = Path(on_path) / "python"
    found = subprocess.run(
        [str(python), "-c", "import pytest, money, freezegun, hypothesis"], check=False
    )
    assert found.returncode == 0
    unused = subprocess.run([str(python), "-c", "import unused"], check=False)
    assert unused.returncode != 0


def test_the_setup_step_leaves_the_setup_to_the_configs_command(tmp_path: Path) -> None:
    (tmp_path / "wheels").mkdir()
    (tmp_path / "head").mkdir()
    (tmp_path / "head" / "requirements.txt").write_text("money\n")

    done = project_setup(tmp_path, setup="make deps")

    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "github_path").exists()
