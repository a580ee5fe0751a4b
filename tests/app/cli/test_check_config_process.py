"""`tiebreak check-config` as a person runs it, in a repository of theirs."""

import subprocess
from pathlib import Path

import pytest

from policies.config import CONFIG_PATH
from tests.kits.command import tiebreak


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git repository with a directory below its root."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / ".github").mkdir()
    return tmp_path


def test_a_yaml_extension_is_said_once_to_be_never_read(repository: Path) -> None:
    (repository / ".github" / "tiebreak.yaml").write_text("min_severity: major\n")

    done = tiebreak("check-config", ".github/tiebreak.yaml", cwd=repository)

    assert done.returncode == 1, done.stdout
    assert done.stdout == (
        ".github/tiebreak.yaml: the App never reads this file: it reads only "
        ".github/tiebreak.yml, at the repository's root\n"
    )


def test_the_repositorys_config_is_found_from_a_directory_below_its_root(
    repository: Path,
) -> None:
    (repository / CONFIG_PATH).write_text("min_severity: major\n")

    done = tiebreak("check-config", cwd=repository / "src" / "pkg")

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"../../{CONFIG_PATH}: OK\n"


def test_a_config_below_the_root_is_said_to_be_never_read(repository: Path) -> None:
    (repository / "src" / ".github").mkdir()
    (repository / "src" / CONFIG_PATH).write_text("min_severity: major\n")

    done = tiebreak("check-config", CONFIG_PATH, cwd=repository / "src")

    assert done.returncode == 1, done.stdout
    assert done.stdout == (
        f"{CONFIG_PATH}: the App never reads this file: it reads only "
        ".github/tiebreak.yml, at the repository's root\n"
    )


def test_no_config_at_all_is_the_defaults(repository: Path) -> None:
    done = tiebreak("check-config", cwd=repository / "src")

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"../{CONFIG_PATH}: no config: the defaults apply\n"


def test_every_bad_glob_is_said_on_its_own_line(repository: Path) -> None:
    (repository / CONFIG_PATH).write_text(
        "paths:\n  exclude:\n    - vendor/**\n    - '!docs/**'\n    - ''\n    - '[[:digit:]]'\n"
    )

    done = tiebreak("check-config", cwd=repository)

    assert done.returncode == 1
    path = CONFIG_PATH
    assert done.stdout.splitlines() == [
        f"{path}:4: paths.exclude.1: '!docs/**': negated globs are not supported; "
        "list what to match",
        f"{path}:5: paths.exclude.2: a glob may not be empty",
        f"{path}:6: paths.exclude.3: '[[:digit:]]': character classes such as [:digit:] are "
        "not supported; list the characters ([0-9])",
    ]


def test_a_word_for_a_number_is_echoed(repository: Path) -> None:
    (repository / CONFIG_PATH).write_text("max_inline_comments: fifteen\n")

    done = tiebreak("check-config", cwd=repository)

    assert done.returncode == 1
    assert done.stdout == (
        f"{CONFIG_PATH}:1: max_inline_comments must be a whole number from 0 to "
        "100, not 'fifteen'\n"
    )


@pytest.mark.parametrize(("written", "meant"), [('"true"', "true"), ("'False'", "false")])
def test_a_boolean_in_quotes_is_refused_with_the_boolean_meant(
    repository: Path, written: str, meant: str
) -> None:
    (repository / CONFIG_PATH).write_text(f"min_severity: major\nreview_drafts: {written}\n")

    done = tiebreak("check-config", cwd=repository)

    assert done.returncode == 1
    assert done.stdout == (
        f"{CONFIG_PATH}:2: review_drafts must be true or false, not the text "
        f"{written[1:-1]!r}; did you mean {meant} (without quotes)?\n"
    )


def test_a_file_not_in_utf8_is_refused_at_its_first_bad_byte(repository: Path) -> None:
    (repository / CONFIG_PATH).write_bytes("label: caf\xe9\n".encode("latin-1"))

    done = tiebreak("check-config", cwd=repository)

    assert done.returncode == 1
    assert done.stdout == (
        f"{CONFIG_PATH}:1: the file is not UTF-8: byte 0xe9 at offset 10 is not UTF-8 text\n"
    )
