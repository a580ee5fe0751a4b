"""The `tiebreak` command line."""

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tiebreak")
def main() -> None:
    """Tiebreak: pull request reviews by a tester, a coder and an arbiter who debate."""
