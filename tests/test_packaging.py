"""The Dockerfile and compose.yaml run what the package really has.

No Docker engine is needed: the files are read, and what they name — the entry point, its
commands and options, the health check's route, the port, the Python version, the locked
install — is checked against the package itself.
"""

import json
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
import pytest
import yaml
from packaging.specifiers import SpecifierSet
from pydantic import SecretStr

from app.cli.main import main
from app.settings import Settings
from app.web.server import create_app

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@dataclass(frozen=True, slots=True)
class Instruction:
    keyword: str
    arguments: str

    def exec_form(self) -> list[str]:
        parsed = json.loads(self.arguments)
        assert isinstance(parsed, list), f"{self.keyword} is not in exec form"
        return [str(part) for part in parsed]


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    found = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, arguments = line.strip().partition(" ")
            found.append(Instruction(keyword.upper(), arguments.strip()))
    return found


DOCKERFILE = instructions((ROOT / "Dockerfile").read_text(encoding="utf-8"))
RUNTIME = DOCKERFILE[max(i for i, ins in enumerate(DOCKERFILE) if ins.keyword == "FROM") :]
"""The last stage: the image that runs."""
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
SERVICES: dict[str, Any] = COMPOSE["services"]


def one(keyword: str, stage: list[Instruction] = RUNTIME) -> Instruction:
    (found,) = [ins for ins in stage if ins.keyword == keyword]
    return found


def command(args: list[str]) -> click.Command:
    """The `tiebreak` subcommand `args` run, with its options checked as click parses them."""
    name, *rest = args
    assert isinstance(main, click.Group)
    sub = main.get_command(click.Context(main), name)
    assert sub is not None, f"tiebreak has no command {name!r}"
    sub.make_context(name, list(rest), resilient_parsing=False)
    return sub


def test_the_entrypoint_is_the_packages_command() -> None:
    (program,) = one("ENTRYPOINT").exec_form()

    assert PYPROJECT["project"]["scripts"][program] == "app.cli:main"


def test_the_default_command_serves_the_webhooks_on_the_exposed_port() -> None:
    args = one("CMD").exec_form()

    command(args)
    assert args[0] == "web"
    assert args[args.index("--host") + 1] == "0.0.0.0"
    assert args[args.index("--port") + 1] == one("EXPOSE").arguments == "8000"


def test_the_health_check_asks_a_route_the_web_server_has() -> None:
    check = one("HEALTHCHECK").arguments
    url = urlsplit(re.findall(r"http://[^'\"\s]+", check)[0])
    app = create_app(
        Settings(github_webhook_secret=SecretStr("a-webhook-secret-unused-here")),
        "redis://127.0.0.1:1",
    )

    assert "get" in app.openapi()["paths"][url.path]
    assert (url.hostname, str(url.port)) == ("127.0.0.1", one("EXPOSE").arguments)
    assert "urllib.request" in check  # the slim image has no curl


def test_the_image_runs_as_a_user_who_is_not_root() -> None:
    user = one("USER").arguments
    created = one("RUN").arguments

    assert user not in ("root", "0")
    assert "useradd --system" in created
    assert created.split()[-1] == user


def test_the_pythons_are_the_versions_the_project_supports() -> None:
    supported = SpecifierSet(PYPROJECT["project"]["requires-python"])
    images = [ins.arguments.split()[0] for ins in DOCKERFILE if ins.keyword == "FROM"]
    versions = {re.fullmatch(r"python:(\d+\.\d+)-slim.*", image) for image in images}

    assert None not in versions
    assert {v.group(1) for v in versions if v} == {PYPROJECT["tool"]["mypy"]["python_version"]}
    assert all(v.group(1) in supported for v in versions if v)


def test_the_dependencies_are_the_locked_ones() -> None:
    syncs = [shlex.split(ins.arguments) for ins in DOCKERFILE if "uv sync" in ins.arguments]

    assert syncs
    for args in syncs:
        sync = args[args.index("sync") :]
        assert {"--frozen", "--no-dev", "--no-editable"} <= set(sync)
    assert "uv.lock" in " ".join(ins.arguments for ins in DOCKERFILE)


def test_the_image_carries_what_the_package_build_reads() -> None:
    copied = " ".join(ins.arguments for ins in DOCKERFILE if ins.keyword == "COPY")
    included = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]

    for name in [PYPROJECT["project"]["readme"], *included["packages"], *included["force-include"]]:
        assert re.search(rf"(^|\s){re.escape(name)}(\s|$)", copied), f"{name} is not copied"
    assert included["force-include"] == {"app.yml": "app/app.yml"}


@pytest.mark.parametrize("service", ["web", "worker"])
def test_compose_runs_the_images_commands(service: str) -> None:
    spec = SERVICES[service]

    command(spec["command"])
    assert spec["command"][0] == service
    assert spec["build"] == "."
    assert spec["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert spec["env_file"] == ".env"
    assert spec["depends_on"]["redis"]["condition"] == "service_healthy"


def test_compose_publishes_the_web_servers_port() -> None:
    web = SERVICES["web"]

    assert web["ports"] == [f"8000:{one('EXPOSE').arguments}"]
    assert web["command"][web["command"].index("--port") + 1] == one("EXPOSE").arguments


def test_workers_can_be_scaled_out() -> None:
    worker = SERVICES["worker"]

    # `--scale worker=N` needs no fixed name and no host port; no HTTP to check either.
    assert "container_name" not in worker
    assert "ports" not in worker
    assert worker["healthcheck"] == {"disable": True}


def test_redis_keeps_its_data_in_a_volume() -> None:
    redis = SERVICES["redis"]

    assert redis["image"].startswith("redis:")
    assert "--appendonly" in redis["command"]
    assert redis["healthcheck"]["test"][:2] == ["CMD", "redis-cli"]
    (volume,) = redis["volumes"]
    assert volume.split(":")[0] in COMPOSE["volumes"]
    assert volume.endswith(":/data")


def test_the_build_context_leaves_the_credentials_out() -> None:
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()

    assert {".env", "*.pem", ".git/", ".venv/"} <= set(ignored)


def test_git_ignores_the_data_tiebreak_serve_keeps_in_the_directory_it_runs_from() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    data_dir = Settings.model_fields["tiebreak_data_dir"].default

    assert f"/{data_dir}/" in ignored


def test_the_readmes_commands_that_run_tiebreak_install_no_dev_dependency() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = "serve|setup|review|check-config|verify-workflow|learnings"
    runs = re.findall(rf"uv run (?:[-\w]+ )*?tiebreak (?:{commands})", readme)
    dev = {re.split(r"[<>=\[ ]", spec)[0] for spec in PYPROJECT["dependency-groups"]["dev"]}
    runtime = {re.split(r"[<>=\[ ]", spec)[0] for spec in PYPROJECT["project"]["dependencies"]}

    assert runs
    assert all("--no-dev" in run for run in runs), runs
    assert dev.isdisjoint(runtime)
    assert "uv run pytest" in readme  # the tests' command installs the dev group


def test_ci_runs_the_tests_as_the_readme_says_to_run_them() -> None:
    """What a person runs from the README is what CI runs: the same pytest options (CI's
    `python3 -m uv run --frozen` is the README's `uv run` with the lock taken as it is)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    told = re.search(r"^uv run (pytest.*)$", readme, re.MULTILINE)
    run = re.findall(r"^python3 -m uv run --frozen (pytest.*)$", ci, re.MULTILINE)

    assert told is not None
    assert run == [told[1]]
    assert shlex.split(told[1])[1:3] == ["-n", "auto"]  # a worker process per core
