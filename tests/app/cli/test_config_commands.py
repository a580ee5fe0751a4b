"""`tiebreak check-config` and `tiebreak config-docs`."""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from app.cli.config_docs import REFERENCE_PATH, ROOT, SCHEMA_PATH, page_with_reference, schema_text
from app.cli.main import main
from policies.config import CONFIG_PATH
from policies.config_file import MAX_CONFIG_BYTES

VALID = """\
triggers: [opened]
min_severity: major
debate:
  max_rounds: 4
"""


def tiebreak(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / CONFIG_PATH
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file_is_ok(tmp_path: Path) -> None:
    path = config_file(tmp_path, VALID)

    result = tiebreak("check-config", str(path))

    assert result.exit_code == 0, result.output
    assert result.stdout == f"{path}: OK\n"


def test_the_default_file_is_the_repositorys_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path(CONFIG_PATH).parent.mkdir()
    Path(CONFIG_PATH).write_text(VALID, encoding="utf-8")

    result = tiebreak("check-config")

    assert result.exit_code == 0, result.output
    assert result.stdout == f"{CONFIG_PATH}: OK\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "enabled: true\ndebate:\n  max_rounds: 0\n",
            ["3: debate.max_rounds must be a whole number from 1 to 50, not 0"],
        ),
        (
            "label: Unresolved\nmax_inline_comments: 500\n",
            ["2: max_inline_comments must be a whole number from 0 to 100"],
        ),
        (
            "paths:\n  exclude: [vendor/**]\n  excludes: [x]\n",
            ["3: paths.excludes is not a Tiebreak option; did you mean paths.exclude?"],
        ),
        ("triggers:\n  - opened\n  - merged\n", ["3: triggers.1 must be one of 'opened', "]),
        ("enabled: true\nenabled: false\n", ["2: enabled is set twice"]),
        (
            "min_severity: huge\nmodels:\n  tester: Not A Model\n",
            ["1: min_severity must be one of ", "3: models.tester must be a model's id"],
        ),
    ],
)
def test_each_problem_is_printed_on_its_line(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = config_file(tmp_path, text)

    result = tiebreak("check-config", str(path))

    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == len(expected)
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(f"{path}:{start}")
    assert "OK" not in result.stdout


def test_another_path_is_checked_and_said_to_be_never_read(tmp_path: Path) -> None:
    path = tmp_path / ".tiebreak.yml"
    path.write_text(VALID, encoding="utf-8")

    result = tiebreak("check-config", str(path))

    assert result.exit_code == 1, result.output
    assert result.stdout == (
        f"{path}: the App never reads this file: it reads only .github/tiebreak.yml, at the "
        "repository's root\n"
    )


def test_another_paths_problems_are_printed_after_it_is_said_to_be_never_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tiebreak.yaml"
    path.write_text("paths:\n  exclude: vendor/**\n", encoding="utf-8")

    result = tiebreak("check-config", str(path))

    assert result.exit_code == 1
    assert result.stdout == (
        f"{path}: the App never reads this file: it reads only .github/tiebreak.yml, at the "
        "repository's root\n"
        f"{path}:2: paths.exclude must be a list of globs (gitignore-style, such as 'src/**')\n"
    )


def test_a_file_with_only_warnings_is_ok(tmp_path: Path) -> None:
    path = config_file(tmp_path, "ignore_authors:\n  - dependabot\n")

    result = tiebreak("check-config", str(path))

    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"{path}:2: warning: ignore_authors.0: 'dependabot' looks like a bot; its pull "
        "requests are opened as dependabot[bot], which this entry does not ignore\n"
        f"{path}: OK\n"
    )


def test_invalid_yaml_is_reported_on_its_line(tmp_path: Path) -> None:
    path = config_file(tmp_path, "enabled: true\npaths:\n  include: [src/**\nlabel: x\n")

    result = tiebreak("check-config", str(path))

    assert result.exit_code == 1
    assert result.stdout.startswith(f"{path}:4: the file is not valid YAML: ")


def test_a_problem_without_a_line_names_the_file_alone(tmp_path: Path) -> None:
    path = config_file(tmp_path, "# padding\n" * (MAX_CONFIG_BYTES // 10 + 1))

    result = tiebreak("check-config", str(path))

    assert result.exit_code == 1
    assert result.stdout == f"{path}: the file is larger than {MAX_CONFIG_BYTES:,} bytes\n"


@pytest.mark.parametrize(
    ("name", "reason"), [("missing.yml", "No such file or directory"), (".", "Is a directory")]
)
def test_an_unreadable_file_is_a_usage_error(tmp_path: Path, name: str, reason: str) -> None:
    path = tmp_path / name

    result = tiebreak("check-config", str(path))

    assert result.exit_code == 2
    assert result.stderr == f"tiebreak: cannot read {path}: {reason}\n"
    assert result.stdout == ""


def test_the_repositorys_docs_are_current() -> None:
    result = tiebreak("config-docs", "--check")

    assert result.exit_code == 0, result.output
    assert result.output == ""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the files `config-docs` generates, with an old schema."""
    (tmp_path / SCHEMA_PATH).parent.mkdir(parents=True)
    (tmp_path / SCHEMA_PATH).write_text('{"title": "an older schema"}\n', encoding="utf-8")
    shutil.copy(ROOT / REFERENCE_PATH, tmp_path / REFERENCE_PATH)
    return tmp_path


def test_check_names_a_stale_schema_and_writes_nothing(project: Path) -> None:
    result = tiebreak("config-docs", "--check", "--root", str(project))

    assert result.exit_code == 1
    assert result.stderr == (f"tiebreak: {SCHEMA_PATH} is out of date; run tiebreak config-docs\n")
    assert (project / SCHEMA_PATH).read_text(encoding="utf-8") == ('{"title": "an older schema"}\n')


def test_config_docs_brings_stale_files_up_to_date(project: Path) -> None:
    readme = project / REFERENCE_PATH
    readme.write_text(
        readme.read_text(encoding="utf-8").replace("| `enabled` |", "| `enabeld` |"),
        encoding="utf-8",
    )

    written = tiebreak("config-docs", "--root", str(project))
    check = tiebreak("config-docs", "--check", "--root", str(project))

    assert written.exit_code == 0, written.output
    assert written.stdout == f"wrote {SCHEMA_PATH}\nwrote {REFERENCE_PATH}\n"
    assert check.exit_code == 0, check.output
    assert (project / SCHEMA_PATH).read_text(encoding="utf-8") == schema_text()
    original = (ROOT / REFERENCE_PATH).read_text(encoding="utf-8")
    assert readme.read_text(encoding="utf-8") == page_with_reference(original)


def test_a_readme_without_markers_is_a_usage_error(project: Path) -> None:
    (project / REFERENCE_PATH).write_text("# Tiebreak\n", encoding="utf-8")

    result = tiebreak("config-docs", "--check", "--root", str(project))

    assert result.exit_code == 2
    assert "has no <!-- config-reference:start -->" in result.stderr


def test_org_defaults_show_the_merged_config_of_a_repository(tmp_path: Path) -> None:
    own = config_file(tmp_path, "label: ours\ndebate:\n  max_rounds: 4\n")
    defaults = tmp_path / "tiebreak.yml"
    defaults.write_text(
        "label: org-wide\nmin_severity: major\ndebate:\n  arbitration: false\n  max_rounds: 3\n",
        encoding="utf-8",
    )

    result = tiebreak("check-config", str(own), "--org-defaults", str(defaults))

    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"{own}: OK\n"
        f"# the config of a repository with {own}, over {defaults}:\n"
        "min_severity: major\n"
        "label: ours\n"
        "debate:\n"
        "  max_rounds: 4\n"
        "  arbitration: false\n"
    )


def test_org_defaults_problems_are_printed_with_their_file(tmp_path: Path) -> None:
    own = config_file(tmp_path, "label: ours\nmax_inline_comments: 500\n")
    defaults = tmp_path / "tiebreak.yml"
    defaults.write_text("enabled: true\nmin_severity: high\n", encoding="utf-8")

    result = tiebreak("check-config", str(own), "--org-defaults", str(defaults))

    assert result.exit_code == 1
    assert result.stdout == (
        f"{own}:2: max_inline_comments must be a whole number from 0 to 100, not 500\n"
        f"{defaults}:2: min_severity must be one of 'blocker', 'major', 'minor' or 'nit', "
        "not 'high'\n"
    )


def test_unreadable_org_defaults_are_a_usage_error(tmp_path: Path) -> None:
    own = config_file(tmp_path, VALID)

    result = tiebreak("check-config", str(own), "--org-defaults", str(tmp_path / "none.yml"))

    assert result.exit_code == 2
    assert "cannot read" in result.stderr
