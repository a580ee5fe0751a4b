"""Tiebreak's workflow template (`app/templates/tiebreak-verify.yml`) run as a runner would
run it, for the tests: its `run:` scripts with bash, in a workspace whose `head/` and `base/`
hold the trees a checkout would have put there, its job's environment given from the inputs
as GitHub gives it (an expression's value, never read by a shell). The steps that `uses:` an
action are the runner's; here a checkout is the tree given, an upload the result read back.
The template is the one Tiebreak ships, or a repository's older copy of it (`text`)."""

import json
import os
import re
import subprocess
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*inputs\.(\w+)\s*\}\}")
RESULT = Path("tiebreak-result/result.json")


OLDER_COPY = Path(__file__).parents[1] / "fixtures/workflows/tiebreak-verify-before-folders.yml"
"""The template as Tiebreak shipped it before `environment_folder`, as a repository keeps it."""


def template(text: str | None = None) -> dict[str, Any]:
    if text is None:
        text = resources.files("app").joinpath("templates/tiebreak-verify.yml").read_text()
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def steps(text: str | None = None) -> list[dict[str, Any]]:
    job: dict[str, Any] = template(text)["jobs"]["test"]
    return list(job["steps"])


def job_env(inputs: Mapping[str, str], text: str | None = None) -> dict[str, str]:
    """The job's `env:`, each `${{ inputs.x }}` replaced by its input's value."""
    env: dict[str, str] = template(text)["jobs"]["test"]["env"]
    return {name: EXPRESSION.sub(lambda m: inputs.get(m[1], ""), v) for name, v in env.items()}


def _runs(step: Mapping[str, Any], inputs: Mapping[str, str]) -> bool:
    condition = step.get("if")
    if condition is None:
        return True
    # The template's only conditions: whether a fix is checked, whether the test is the
    # pull request's own.
    fix = inputs.get("patches", "") != ""
    own = inputs.get("own_test", "") != ""
    return {
        "inputs.patches == ''": not fix,
        "inputs.patches != ''": fix,
        "inputs.patches == '' && inputs.own_test == ''": not fix and not own,
        "inputs.own_test == ''": not own,
    }[condition]


def run_step(
    step: Mapping[str, Any], workspace: Path, inputs: Mapping[str, str], text: str | None = None
) -> int:
    """One `run:` step, as GitHub's `shell: bash` runs it: `bash -eo pipefail <file>`."""
    script = workspace.parent / f"{workspace.name}-step.sh"
    script.write_text(step["run"])
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workspace), **job_env(inputs, text)}
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=workspace,
        env=env,
        capture_output=True,
        check=False,
    )
    return done.returncode


def run_template(
    workspace: Path,
    inputs: Mapping[str, str],
    trees: Mapping[str, Mapping[str, str]],
    text: str | None = None,
) -> dict[str, Any] | None:
    """Run the template's job (of `text`, else the shipped one) in `workspace` with `inputs`;
    `trees` the files at each side (`head`, `base`). The JSON result it uploads, or None if a
    step failed before it."""
    workspace.mkdir(parents=True, exist_ok=True)
    for step in steps(text):
        if not _runs(step, inputs):
            continue
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            side = step["with"]["path"]
            for path, content in trees[side].items():
                file = workspace / side / path
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_text(content)
        elif uses.startswith("actions/upload-artifact@"):
            result = workspace / RESULT
            loaded: dict[str, Any] = json.loads(result.read_text())
            return loaded
        elif run_step(step, workspace, inputs, text) != 0:
            return None
    raise AssertionError("the template uploads no result")
