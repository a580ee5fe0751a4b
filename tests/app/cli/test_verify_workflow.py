"""`tiebreak verify-workflow` prints the workflow a repository adds to run findings' tests."""

import yaml
from click.testing import CliRunner

from app.cli.main import main


def test_the_printed_workflow_is_dispatched_with_the_run_token_as_its_title() -> None:
    printed = CliRunner().invoke(main, ["verify-workflow"])

    assert printed.exit_code == 0
    workflow = yaml.safe_load(printed.output)
    assert workflow["run-name"] == "Tiebreak ${{ inputs.token }}"
    assert "token" in workflow[True]["workflow_dispatch"]["inputs"]
