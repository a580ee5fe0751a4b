"""The dotenv file `tiebreak setup` writes, and how Tiebreak's commands read it."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from dotenv import dotenv_values

from app.settings import ENV_FILE_VARIABLE, get_settings
from app.setup.env_file import render, write_private
from tests.fakes.github_api import AppKey

URL = "https://tiebreak.example.com/hooks?"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that lets every file be readable by all, as some machines have."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def test_every_value_reads_back_as_written(key: AppKey, tmp_path: Path) -> None:
    values = {
        "GITHUB_APP_ID": "4242",
        "GITHUB_PRIVATE_KEY": key.private_pem,
        "GITHUB_WEBHOOK_SECRET": "a" * 40,
        "PUBLIC_URL": URL,
        "PLAIN": "with $HOME, # and \\n",
    }
    path = tmp_path / ".env"

    path.write_text(render(values, comments=["The App.", "", "More."]))

    assert dotenv_values(path) == values
    assert path.read_text().startswith("# The App.\n#\n# More.\n")
    # The key's lines stay on one line of the file.
    assert len(path.read_text().splitlines()) == 3 + len(values)


@pytest.mark.parametrize("value", ["it's", "a\rb", 'two\nlines "quoted"', "two\nlines $X"])
def test_a_value_the_syntax_cannot_carry_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="may not hold"):
        render({"NAME": value})


@pytest.mark.usefixtures("open_umask")
def test_the_file_is_created_for_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / ".env"

    write_private(path, "A='1'\n")

    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == "A='1'\n"


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("KEEP=1\n")

    with pytest.raises(FileExistsError):
        write_private(path, "A='1'\n")

    assert path.read_text() == "KEEP=1\n"


def test_a_link_is_never_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    path = tmp_path / ".env"
    path.symlink_to(target)

    with pytest.raises(FileExistsError):
        write_private(path, "A='1'\n")

    assert not target.exists()


@pytest.mark.usefixtures("open_umask")
def test_replacing_swaps_in_an_owner_only_file(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("OLD=1\n")
    path.chmod(0o644)

    write_private(path, "A='1'\n", replace=True)

    assert path.read_text() == "A='1'\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == [".env"]


def test_the_commands_read_the_file_and_the_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: AppKey
) -> None:
    (tmp_path / ".env").write_text(
        render(
            {
                "GITHUB_APP_ID": "4242",
                "GITHUB_PRIVATE_KEY": key.private_pem,
                "GITHUB_WEBHOOK_SECRET": "a-secret-from-the-file",
            }
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV_FILE_VARIABLE)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "from-the-environment")

    settings = get_settings()

    assert settings.github_app_id == 4242
    assert settings.private_key() == key.private_pem
    assert settings.github_webhook_secret is not None
    assert settings.github_webhook_secret.get_secret_value() == "from-the-environment"


def test_another_file_is_named_by_tiebreak_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tiebreak.env").write_text("GITHUB_APP_ID='7'\n")
    (tmp_path / ".env").write_text("GITHUB_APP_ID='8'\n")
    monkeypatch.chdir(tmp_path)

    monkeypatch.setenv(ENV_FILE_VARIABLE, "tiebreak.env")
    named = get_settings().github_app_id
    get_settings.cache_clear()
    monkeypatch.setenv(ENV_FILE_VARIABLE, "")
    none = get_settings().github_app_id

    assert (named, none) == (7, None)
