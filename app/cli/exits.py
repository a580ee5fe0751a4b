"""How a `tiebreak` command ends on a usage or input error: a line on standard error, status 2."""

import sys
from typing import NoReturn

import click

EXIT_USAGE = 2
EXIT_PROBLEMS = 1
"""`check-config` found a problem, `config-docs --check` a stale file, or `setup` stopped
before an App was registered."""


def fail(reason: str) -> NoReturn:
    click.echo(f"tiebreak: {reason}", err=True)
    sys.exit(EXIT_USAGE)
