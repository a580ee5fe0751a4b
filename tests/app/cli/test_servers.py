"""`tiebreak serve` and `tiebreak worker` that cannot start, run as a person runs them: one line
on stderr naming the cause and the address, status 2, nothing else."""

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from app.store.embedded import EmbeddedRedis, redis_dir
from tests.fakes.github_api import AppKey
from tests.fakes.loopback import free_port
from tests.kits.command import Done, run_tiebreak


def environment(key: AppKey, data_dir: Path, **more: str) -> dict[str, str]:
    """Every setting a server needs, GitHub's API at an address where nothing listens."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "GITHUB_APP_ID": "42",
        "GITHUB_PRIVATE_KEY": key.private_pem,
        "GITHUB_WEBHOOK_SECRET": "a-webhook-secret-for-servers",
        "GITHUB_API_URL": f"http://127.0.0.1:{free_port()}",
        "ANTHROPIC_API_KEY": "sk-servers",
        "TIEBREAK_DATA_DIR": str(data_dir),
        "TIEBREAK_ENV_FILE": "",
        **more,
    }


def tiebreak(*args: str, env: dict[str, str]) -> Done:
    return run_tiebreak(*args, cwd=Path(env["TIEBREAK_DATA_DIR"]), env=env)


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port on 127.0.0.1 another program listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def test_a_worker_without_its_redis_says_so_in_one_line(key: AppKey, tmp_path: Path) -> None:
    port = free_port()
    env = environment(key, tmp_path, REDIS_URL=f"redis://:hunter2@127.0.0.1:{port}/0")

    done = tiebreak("worker", env=env)

    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"tiebreak: cannot reach Redis at redis://127.0.0.1:{port}/0: "), line
    assert "hunter2" not in line
    assert done.stdout == ""


@pytest.mark.parametrize("command", ["serve", "web"])
def test_a_server_on_a_port_already_taken_says_so_in_one_line(
    command: str, key: AppKey, tmp_path: Path, taken_port: int
) -> None:
    # `web` needs a Redis address; nothing is asked of it before the port is taken.
    more = {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"} if command == "web" else {}
    env = environment(key, tmp_path, **more)

    done = tiebreak(command, "--port", str(taken_port), env=env)

    assert (done.returncode, done.stderr) == (
        2,
        f"tiebreak: cannot listen on 127.0.0.1:{taken_port}: Address already in use\n",
    )
    assert done.stdout == ""


def test_a_second_serve_on_the_same_data_directory_says_so_and_leaves_the_first_s_redis(
    key: AppKey, tmp_path: Path
) -> None:
    env = environment(key, tmp_path)
    with EmbeddedRedis(redis_dir(tmp_path), persist=False) as first:  # the first serve's
        with redis.Redis.from_url(first.url) as client:
            client.set("queued", "a review")

        done = tiebreak("serve", "--port", str(free_port()), env=env)

        with redis.Redis.from_url(first.url) as client:
            assert client.get("queued") == b"a review"
    assert (done.returncode, done.stderr) == (
        2,
        f"tiebreak: another `tiebreak serve` runs its Redis in {tmp_path / 'redis'}: "
        "stop it first\n",
    )
    assert done.stdout == ""


@pytest.mark.parametrize("command", ["serve", "worker", "status"])
def test_settings_set_wrong_are_each_named_in_one_line_never_their_values(
    command: str, key: AppKey, tmp_path: Path
) -> None:
    env = environment(key, tmp_path, GITHUB_APP_ID="forty-two", GITHUB_WEBHOOK_SECRET="   ")

    done = tiebreak(command, env=env)

    assert (done.returncode, done.stderr) == (
        2,
        "tiebreak: GITHUB_APP_ID: Input should be a valid integer, unable to parse string as "
        "an integer; GITHUB_WEBHOOK_SECRET is empty\n",
    )
    assert done.stdout == ""


def test_a_webhook_secret_short_enough_to_guess_is_refused_by_its_length_alone(
    key: AppKey, tmp_path: Path
) -> None:
    env = environment(key, tmp_path, GITHUB_WEBHOOK_SECRET="hunter2hunter")

    done = tiebreak("serve", env=env)

    assert (done.returncode, done.stderr) == (
        2,
        "tiebreak: GITHUB_WEBHOOK_SECRET has 13 characters: one shorter than 16 can be guessed, "
        "and with it anyone can forge GitHub's deliveries; use a random one (`openssl rand -hex "
        "32` prints one)\n",
    )
    assert "hunter2" not in done.stdout + done.stderr
    assert not (tmp_path / "redis").exists()  # refused before its Redis was started
