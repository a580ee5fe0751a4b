"""The `tiebreak` command line."""

from click.testing import CliRunner

from app.cli.main import main


def test_tiebreak_shows_its_help_and_version() -> None:
    runner = CliRunner()

    help_ = runner.invoke(main, ["--help"])
    version = runner.invoke(main, ["--version"])

    assert help_.exit_code == 0
    assert "tester, a coder and an arbiter" in help_.output
    assert version.exit_code == 0
    assert "0.1.0" in version.output
