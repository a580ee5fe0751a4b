"""`tiebreak check-config`, `tiebreak verify-workflow` and `tiebreak config-docs`: a config
file checked as the App reads it, the workflow a repository adds for its findings' tests, and
the config's reference regenerated from its model.

Each command loads what it uses (the config's model, YAML, the workflow's template) as it runs,
so that their help and usage errors load nothing but click.
"""

import os
import sys
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import click

from app.cli.exits import EXIT_PROBLEMS
from app.cli.exits import fail as _fail
from app.cli.work_tree import work_tree
from policies.defaults import CONFIG_PATH

if TYPE_CHECKING:
    from policies.config_file import ConfigProblem


@click.command("check-config")
@click.argument("file", required=False)
@click.option(
    "--org-defaults",
    "defaults",
    metavar="DEFAULTS",
    help="The organisation's defaults (tiebreak.yml of OWNER/.github): check FILE over them "
    "and print the config a repository with FILE gets.",
)
def check_config(file: str | None, defaults: str | None) -> None:
    """Check a config file (default .github/tiebreak.yml) as the App reads it.

    The default FILE is .github/tiebreak.yml at the root of the git repository of the
    current directory: where the App reads it, at the pull request's base. With no such
    file, the defaults apply. Another file is checked all the same, and said to be one the
    App never reads (.github/tiebreak.yaml, a .github below the root). With --org-defaults,
    FILE is checked over those defaults, and the merged config printed as YAML (the options
    it sets beside Tiebreak's own defaults). Exit status: 0 when valid (warnings printed),
    1 when either file has problems (each printed as FILE:LINE: message, in line order) or
    FILE is one the App never reads, 2 when one cannot be read.
    """
    import yaml

    from policies.config import layered_config
    from policies.config_file import ConfigProblem

    if file is None:
        file = _repository_config()
        if not Path(file).exists():
            click.echo(f"{file}: no config: the defaults apply")
            file = None
    own_text, own_problems = _read(file) if file is not None else (None, [])
    defaults_text, defaults_problems = _read(defaults) if defaults is not None else (None, [])
    config, found = layered_config(own_text, defaults_text, defaults or "")
    problems = [*own_problems, *(replace(p, source=defaults) for p in defaults_problems), *found]
    if file is not None and not _is_read_by_the_app(file):
        problems.insert(0, ConfigProblem(NEVER_READ))
    for problem in problems:
        source = problem.source or file or CONFIG_PATH
        where = f"{source}:{problem.line}" if problem.line else source
        said = f"warning: {problem.message}" if problem.warning else problem.message
        click.echo(f"{where}: {said}")
    if any(not p.warning for p in problems):
        sys.exit(EXIT_PROBLEMS)
    if file is not None:
        click.echo(f"{file}: OK")
    if defaults is not None:
        own = f"with {file}" if file is not None else "without a config of its own"
        click.echo(f"# the config of a repository {own}, over {defaults}:")
        merged = config.model_dump(mode="json", exclude_defaults=True)
        click.echo(yaml.safe_dump(merged, sort_keys=False, allow_unicode=True), nl=False)


NEVER_READ = f"the App never reads this file: it reads only {CONFIG_PATH}, at the repository's root"


def _repository_config() -> str:
    """Where the App reads the config of the repository of the current directory, as a
    path from it: :data:`CONFIG_PATH` at the root of its git work tree (the current
    directory, outside any)."""
    here = Path.cwd()
    root = work_tree(here) or here
    return os.path.relpath(root / CONFIG_PATH, here)


def _read(file: str) -> "tuple[str | None, list[ConfigProblem]]":
    """The text of `file`, or None and why it is not text the App can read; exit 2 when it
    cannot be read."""
    from policies.config_file import MAX_CONFIG_BYTES, undecodable

    try:
        # One byte past the limit is enough for parse_config to refuse a larger file.
        with Path(file).open("rb") as stream:
            data = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        _fail(f"cannot read {file}: {exc.strerror or exc}")
    if (problem := undecodable(data[:MAX_CONFIG_BYTES])) is not None:
        return None, [problem]
    return data.decode("utf-8", errors="replace"), []


def _is_read_by_the_app(file: str) -> bool:
    """Whether `file` is where the App looks: `.github/tiebreak.yml` at the root of its git
    work tree (of some checkout, when it is in none)."""
    path = Path(file).resolve()
    root = work_tree(path.parent)
    if root is None:
        return path.parts[-2:] == tuple(PurePosixPath(CONFIG_PATH).parts)
    return path == root / CONFIG_PATH


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
