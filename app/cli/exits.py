"""How a `tiebreak` command ends on a usage or input error: a line on standard error, status 2."""

import sys
from typing import NoReturn

import click

EXIT_USAGE = 2


def fail(reason: str) -> NoReturn:
    click.echo(f"tiebreak: {reason}", err=True)
    sys.exit(EXIT_USAGE)
