"""`tiebreak review`: the trio on a local diff or a pull request on GitHub, the outcome in the
terminal or as JSON.

Only the command's options are defined here, with click and constants alone, so that its help
and usage errors load nothing else; what it does once they are read, with the model's SDK and
GitHub's client, is :mod:`app.cli.reviewing`.
"""

from pathlib import Path
from typing import Any

import click

from app.cli.debate_options import debate_options
from app.cli.model_choice import model_options
from app.cli.testing_options import verify_options

EPILOG = """\b
The model's key: ANTHROPIC_API_KEY. On Amazon Bedrock (TIEBREAK_PROVIDER=bedrock), AWS's
credentials and AWS_REGION; on Google Vertex AI (TIEBREAK_PROVIDER=vertex), Google's
application-default credentials, CLOUD_ML_REGION and ANTHROPIC_VERTEX_PROJECT_ID.
A pull request is read with GITHUB_TOKEN (else `gh auth token`); without a token, only a
public repository's.
"""


@click.command(epilog=EPILOG)
@click.argument("source", metavar="DIFF|PULL")
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON.")
@debate_options
@click.option("--no-arbitration", is_flag=True, help="Leave deadlocks unresolved.")
@click.option(
    "--topology",
    type=click.Choice(["ring", "full"]),
    help="Whom each panel tester hears: its two neighbours, or everyone (default ring).",
)
@click.option(
    "--repo",
    "repo_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="A checkout at the diff's new side, to read the code around each change from "
    "(default: the current directory, when it is one); with a PULL, a checkout at its head "
    "to search instead of downloading the repository.",
)
@click.option(
    "--description",
    metavar="TEXT|@FILE",
    help="What the change says it does, for the agents to read as its author's claim (with "
    "a DIFF; @FILE reads it from FILE). Default: with --base, the commits' messages between "
    "--base and the checkout's head. A PULL's own title and description are read from GitHub.",
)
@click.option(
    "--post",
    is_flag=True,
    help="Post the review on the pull request, as the token's user (with a PULL only).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the review's plan — its units, what each reads, the files left unreviewed "
    "and why, the cost estimate — and stop: no model is called, and no key is needed.",
)
@model_options
@verify_options
def review(**options: Any) -> None:
    """Review a unified diff (a file, or - for standard input) or a pull request on GitHub
    (https://github.com/OWNER/REPO/pull/N, or OWNER/REPO#N) with the three agents.

    A pull request's debate follows its repository's .github/tiebreak.yml at the base, which
    the options override.

    Exit status: 0 when no finding is left open (or --dry-run printed the plan), 1 when
    findings stay unresolved or a part of the diff could not be reviewed, 2 for a usage or
    input error, or when, with --verify, the project's environment cannot run a trivial test
    (checked before any model call).
    """
    # The config's models are built before the model's SDK is loaded: pydantic reads their
    # attributes' docstrings through `inspect`, which looks through every module loaded so
    # far, and the SDK loads some three thousand (a tenth of the time to the first request).
    import policies.config  # noqa: F401
    from app.cli import reviewing

    reviewing.run(reviewing.ReviewOptions(**options))
