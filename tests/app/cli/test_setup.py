"""`tiebreak setup` as a user runs it: a real process, a browser's requests (with the cookies
the page sets), the fake GitHub; then `tiebreak serve` started on the `.env` it wrote, and
nothing else. And as an attacker tries it: from another browser, or under another name."""

import os
import signal
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from dotenv import dotenv_values

from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.loopback import free_port
from tests.kits.setup_flow import APP_ID, CONVERSIONS, PUBLIC_URL, Browser, parse_form

TIEBREAK = Path(sys.executable).with_name("tiebreak")
DEADLINE = 60.0
"""A bound on a hang, not a measure: `tiebreak serve` warms up beside other tests."""


@pytest.fixture
def fake(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github:
        github.allow_registration(key.private_pem)
        yield github


def environment(**more: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), **more}


def start(args: list[str], cwd: Path, env: dict[str, str]) -> "subprocess.Popen[str]":
    """`tiebreak ARGS` in its own process group, as a terminal runs a command."""
    return subprocess.Popen(
        [str(TIEBREAK), *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        process_group=0,
    )


def ctrl_c(process: "subprocess.Popen[str]") -> None:
    """What a terminal does on Ctrl-C: SIGINT to the whole process group."""
    os.killpg(process.pid, signal.SIGINT)


def wait_for(url: str, process: "subprocess.Popen[str]") -> None:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the command exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    raise AssertionError(f"{url} did not answer")


def finish(process: "subprocess.Popen[str]") -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return process.returncode, out, err


def setup(fake: FakeGitHub, cwd: Path, port: int) -> "subprocess.Popen[str]":
    args = ["setup", "--public-url", PUBLIC_URL, "--github-url", fake.base_url]
    return start([*args, "--port", str(port)], cwd, environment(GITHUB_API_URL=fake.base_url))


def test_setup_registers_the_app_and_serve_runs_on_what_it_wrote(
    fake: FakeGitHub, key: AppKey, tmp_path: Path
) -> None:
    port = free_port()
    process = setup(fake, tmp_path, port)
    page = f"http://127.0.0.1:{port}/"
    wait_for(page, process)

    browser = Browser()
    status, html, _ = browser.get(page)
    done, text, _ = browser.submit(parse_form(html), follow=True)  # to GitHub, and back
    code, out, err = finish(process)

    assert (status, done) == (200, 200)
    assert "Registered Tiebreak" in text
    assert code == 0, err
    assert f"Open {page} in a browser" in out
    assert f"{fake.base_url}/apps/tiebreak/installations/new" in out
    env_file = tmp_path / ".env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    written = dotenv_values(env_file)
    assert written["GITHUB_APP_ID"] == str(APP_ID)
    assert written["GITHUB_PRIVATE_KEY"] == key.private_pem
    assert written["GITHUB_WEBHOOK_SECRET"] == fake.registration_webhook_secret

    # `tiebreak serve` in that directory needs nothing else but the model's key.
    port = free_port()
    data = tmp_path / "data"
    env = environment(ANTHROPIC_API_KEY="sk-test", TIEBREAK_DATA_DIR=str(data))
    server = start(["serve", "--port", str(port)], tmp_path, env)
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", server)
    finally:
        ctrl_c(server)
        code, _, err = finish(server)
    assert code == 0, err
    assert "Traceback" not in err


def test_ctrl_c_before_github_answers_writes_nothing(fake: FakeGitHub, tmp_path: Path) -> None:
    port = free_port()
    process = setup(fake, tmp_path, port)
    wait_for(f"http://127.0.0.1:{port}/", process)

    ctrl_c(process)
    code, _, err = finish(process)

    assert code == 1
    assert "nothing was written" in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_setup_refuses_a_state_fetched_by_another_browser_and_writes_nothing(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    port = free_port()
    process = setup(fake, tmp_path, port)
    page = f"http://127.0.0.1:{port}/"
    wait_for(page, process)
    user, attacker = Browser(), Browser()
    user.get(page)
    # Another user of the machine fetches the page, registers an App of their own with its
    # state, and gets the user's browser to follow GitHub's redirect for it.
    _, html, _ = attacker.get(page)
    status, _, headers = attacker.submit(parse_form(html), follow=False)
    assert status == 302

    refused, text, _ = user.get(headers["location"])
    ctrl_c(process)
    code, out, err = finish(process)

    assert refused == 403
    assert "did not come back to the browser this page gave its state to" in text
    assert fake.requests_to("POST", CONVERSIONS) == []
    assert code == 1
    assert "did not come back to the browser this page gave its state to" in err
    assert "nothing was written" in err
    assert "installations/new" not in out
    assert list(tmp_path.iterdir()) == []


def test_setup_gives_no_form_to_a_foreign_host(fake: FakeGitHub, tmp_path: Path) -> None:
    # DNS rebinding: a page of another site, its name now resolving to 127.0.0.1, asks for
    # the setup page under that name.
    port = free_port()
    process = setup(fake, tmp_path, port)
    page = f"http://127.0.0.1:{port}/"
    wait_for(page, process)
    host = f"rebound.attacker.example:{port}"

    status, body, headers = Browser().get(page, host=host)
    ctrl_c(process)
    code, _, err = finish(process)

    assert status == 400
    assert "<form" not in body
    assert "settings/apps/new" not in body
    assert "set-cookie" not in {name.lower() for name in headers}
    assert code == 1
    assert f"refused a request for {host!r}: this page answers only at {page}" in err
    assert "DNS rebinding" in err
    assert list(tmp_path.iterdir()) == []


def test_setup_needs_the_address_github_reaches(tmp_path: Path) -> None:
    code, _, err = finish(start(["setup"], tmp_path, environment()))

    assert code == 2
    assert "--public-url (or PUBLIC_URL) is required" in err


def test_setup_leaves_an_existing_env_file_alone(fake: FakeGitHub, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("KEEP=1\n")

    code, _, err = finish(setup(fake, tmp_path, free_port()))

    assert code == 2
    assert ".env exists; move it away, or pass --force" in err
    assert (tmp_path / ".env").read_text() == "KEEP=1\n"
