"""`tiebreak check-config`, `tiebreak verify-workflow` and `tiebreak config-docs`: a config
file checked as the App reads it, the workflow a repository adds for its findings' tests, and
the config's reference regenerated from its model.

Each command loads what it uses (the config's model, YAML, the workflow's template) as it runs,
so that their help and usage errors load nothing but click.
"""

import sys
from pathlib import Path, PurePosixPath

import click

from app.cli.exits import EXIT_PROBLEMS
from app.cli.exits import fail as _fail
from policies.defaults import CONFIG_PATH


@click.command("check-config")
@click.argument("file", default=CONFIG_PATH)
@click.option(
    "--org-defaults",
    "defaults",
    metavar="DEFAULTS",
    help="The organisation's defaults (tiebreak.yml of OWNER/.github): check FILE over them "
    "and print the config a repository with FILE gets.",
)
def check_config(file: str, defaults: str | None) -> None:
    """Check a config file (default .github/tiebreak.yml) as the App reads it.

    The App reads only .github/tiebreak.yml, at the pull request's base: another path is
    checked all the same, with a warning. With --org-defaults, FILE is checked over those
    defaults, and the merged config printed as YAML (the options it sets beside Tiebreak's
    own defaults). Exit status: 0 when valid (warnings printed), 1 when either file has
    problems (each printed as FILE:LINE: message, in line order), 2 when one cannot be read.
    """
    import yaml

    from policies.config import layered_config

    own_text = _read(file)
    defaults_text = _read(defaults) if defaults is not None else None
    elsewhere = not _is_read_by_the_app(file)
    if elsewhere:
        click.echo(f"{file}: warning: the App reads only {CONFIG_PATH}, not this file")
    config, problems = layered_config(own_text, defaults_text, defaults or "")
    for problem in problems:
        name = problem.source or file
        where = f"{name}:{problem.line}" if problem.line else name
        said = f"warning: {problem.message}" if problem.warning else problem.message
        click.echo(f"{where}: {said}")
    if any(not p.warning for p in problems):
        sys.exit(EXIT_PROBLEMS)
    click.echo(f"{file}: OK" + (f" (but the App reads only {CONFIG_PATH})" if elsewhere else ""))
    if defaults is not None:
        click.echo(f"# the config of a repository with {file}, over {defaults}:")
        merged = config.model_dump(mode="json", exclude_defaults=True)
        click.echo(yaml.safe_dump(merged, sort_keys=False, allow_unicode=True), nl=False)


def _read(file: str) -> str:
    from policies.config_file import MAX_CONFIG_BYTES

    try:
        # One byte past the limit is enough for parse_config to refuse a larger file.
        with Path(file).open("rb") as stream:
            data = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        _fail(f"cannot read {file}: {exc.strerror or exc}")
    # Decoded as the App decodes the file it fetches from GitHub.
    return data.decode("utf-8", errors="replace")


def _is_read_by_the_app(file: str) -> bool:
    """Whether `file` is where the App looks: `.github/tiebreak.yml` of some checkout."""
    return Path(file).parts[-2:] == tuple(PurePosixPath(CONFIG_PATH).parts)


@click.command("config-docs", hidden=True)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a file is out of date.")
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    hidden=True,
    help="The clone of Tiebreak whose files are written (default: this one's).",
)
def config_docs_command(check: bool, root: Path | None) -> None:
    """Generate the config's JSON Schema and reference page from the model.

    Writes docs/config.schema.json and the section of docs/configuration.md between its
    config-reference markers; with --check, writes nothing and exits 1 if either is out of date.
    """
    from app.cli import config_docs

    root = root or config_docs.ROOT
    try:
        paths = config_docs.stale_files(root) if check else config_docs.write_files(root)
    except OSError as exc:
        _fail(f"{exc.filename}: {exc.strerror or exc}")
    except ValueError as exc:
        _fail(str(exc))
    for path in paths:
        if check:
            click.echo(f"tiebreak: {path} is out of date; run tiebreak config-docs", err=True)
        else:
            click.echo(f"wrote {path}")
    if check and paths:
        sys.exit(EXIT_PROBLEMS)


@click.command("verify-workflow")
def verify_workflow() -> None:
    """Print the workflow that runs findings' tests in a repository's GitHub Actions.

    Save it as .github/workflows/tiebreak-verify.yml on the default branch and name it in
    the config (verify.workflow); the App needs the actions: write permission to run it.
    """
    from app.verification.workflow import template_text

    click.echo(template_text(), nl=False)
