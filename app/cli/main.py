"""The `tiebreak` command line."""

import asyncio
import contextlib
import sys
from collections.abc import Coroutine
from pathlib import Path

import click
import uvicorn
from pydantic import ValidationError

from app.cli import config_docs
from app.cli.evaluate import evaluate
from app.cli.exits import fail as _fail
from app.cli.learnings import learnings
from app.cli.review import review
from app.cli.status import watch
from app.jobs.deps import WorkerSetup
from app.jobs.worker import Workers, run_until_signalled
from app.settings import MissingSettings, Settings, SettingsError, env_file, get_settings
from app.setup.manifest import DEFAULT_GITHUB_URL, api_url_for, base_url, install_url, is_private
from app.setup.manifest import load_manifest as load_app_manifest
from app.setup.page import CALLBACK_PATH, listen
from app.setup.page import serve as serve_registration
from app.setup.registration import Registration, SetupOptions
from app.store.connection import STORE_ERRORS
from app.store.embedded import EmbeddedRedis
from app.telemetry import logs
from app.verification.workflow import template_text
from app.web import webhooks
from app.web.server import create_app
from policies.config import CONFIG_PATH, MAX_CONFIG_BYTES, parse_config

EXIT_PROBLEMS = 1
"""`check-config` found a problem, `config-docs --check` a stale file, or `setup` stopped
before an App was registered."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tiebreak")
def main() -> None:
    """Tiebreak: pull request reviews by a tester, a coder and an arbiter who debate."""


main.add_command(review)
main.add_command(evaluate)
main.add_command(learnings)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
def serve(host: str, port: int) -> None:
    """Run the web server and a worker in one process.

    With REDIS_URL unset, starts an embedded Redis under TIEBREAK_DATA_DIR.
    """
    settings = _settings(web=True, worker=True)
    deps = WorkerSetup.from_settings(settings)
    with contextlib.ExitStack() as stack:
        redis_url = (
            settings.redis_url
            or stack.enter_context(EmbeddedRedis(settings.tiebreak_data_dir / "redis")).url
        )
        _run_server(_serve(settings, redis_url, host, port, deps))


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
def web(host: str, port: int) -> None:
    """Run the web server alone, on the Redis at REDIS_URL."""
    settings = _settings(web=True)
    redis_url = _redis_url(settings)
    _run_server(_serve(settings, redis_url, host, port, None))


@main.command()
def worker() -> None:
    """Run a worker alone, on the Redis at REDIS_URL (run as many as you like)."""
    settings = _settings(worker=True)
    run_until_signalled(WorkerSetup.from_settings(settings), _redis_url(settings))


@main.command()
@click.option(
    "--public-url",
    metavar="URL",
    help="Where GitHub reaches this server (default: PUBLIC_URL); the webhooks go to "
    "URL/api/github/webhooks.",
)
@click.option("--org", metavar="ORG", help="Register the App for this organization.")
@click.option(
    "--github-url",
    default=DEFAULT_GITHUB_URL,
    show_default=True,
    metavar="URL",
    help="GitHub's web address (GitHub Enterprise Server: https://HOST).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port of the page on 127.0.0.1 (default: a free one).",
)
@click.option("--force", is_flag=True, help="Replace an existing .env.")
def setup(public_url: str | None, org: str | None, github_url: str, port: int, force: bool) -> None:
    """Register Tiebreak's GitHub App (app.yml) and write its credentials to .env.

    Serves a page on 127.0.0.1 that sends app.yml to GitHub. GitHub registers the App and
    sends the browser back; the App's id, private key and webhook secret then go to .env
    (or the file TIEBREAK_ENV_FILE names), readable by its owner only. The API is
    GITHUB_API_URL's (default: the API of --github-url).
    """
    try:
        settings = get_settings()
    except ValidationError as exc:
        _fail(str(exc).splitlines()[0])
    path = env_file()
    if path is None:
        _fail("TIEBREAK_ENV_FILE is empty: there is no file to write the App's credentials to")
    if (path.exists() or path.is_symlink()) and not force:
        _fail(f"{path} exists; move it away, or pass --force to replace it")
    public_url = public_url or (str(settings.public_url) if settings.public_url else None)
    if not public_url:
        _fail("--public-url (or PUBLIC_URL) is required: the address GitHub sends webhooks to")
    try:
        public_url, github_url = base_url(public_url), base_url(github_url)
    except ValueError as exc:
        _fail(str(exc))
    if is_private(public_url):
        click.echo(f"tiebreak: warning: GitHub cannot reach {public_url}", err=True)
    configured_api = "github_api_url" in settings.model_fields_set
    api_url = str(settings.github_api_url) if configured_api else api_url_for(github_url)
    manifest = load_app_manifest()
    try:
        sock = listen(port)
    except OSError as exc:
        _fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}")
    page = f"http://127.0.0.1:{sock.getsockname()[1]}"
    options = SetupOptions(public_url, github_url, api_url, path, org, force)
    flow = Registration(options, manifest, page + CALLBACK_PATH)
    owner = f"the organization {org}" if org else "your account"
    click.echo(f"Open {page}/ in a browser on this machine to register {manifest.name}")
    click.echo(f"as a GitHub App of {owner} on {github_url}, with webhooks to {flow.webhook_url}")
    click.echo("Waiting for GitHub to send the browser back (Ctrl-C stops)...")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_registration(flow, sock, lambda line: click.echo(line, err=True)))
    if flow.app is None:
        click.echo("tiebreak: stopped before an App was registered; nothing was written", err=True)
        sys.exit(EXIT_PROBLEMS)
    click.echo(f"Registered {flow.app.name}: {flow.app.html_url}")
    click.echo(f"Wrote {path} (mode 0600): {', '.join(flow.env_values(flow.app))}")
    click.echo(f"Next: install the App on repositories at {install_url(flow.app.html_url)}")
    click.echo(f"then add ANTHROPIC_API_KEY to {path}, and run: tiebreak serve --host 0.0.0.0")


@main.command()
@click.option("--once", is_flag=True, help="Print the live runs once and exit.")
@click.option(
    "--every",
    type=click.FloatRange(min=0.1),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between redraws.",
)
def status(once: bool, every: float) -> None:
    """Show the live review runs on the Redis at REDIS_URL: their units, agents, states,
    heartbeats, rounds and tokens, redrawn every SECONDS until Ctrl-C."""
    try:
        settings = get_settings()
    except ValidationError as exc:
        _fail(str(exc).splitlines()[0])
    redis_url = _redis_url(settings)
    clear = not once and sys.stdout.isatty()
    # Ctrl-C is how the view ends: quietly, and successfully.
    with contextlib.suppress(KeyboardInterrupt):
        try:
            asyncio.run(
                watch(
                    redis_url,
                    settings.tiebreak_heartbeat,
                    click.echo,
                    every=None if once else every,
                    clear=clear,
                )
            )
        except STORE_ERRORS as exc:
            _fail(f"cannot reach Redis: {exc}")


@main.command("check-config")
@click.argument("file", default=CONFIG_PATH)
def check_config(file: str) -> None:
    """Check a config file (default .github/tiebreak.yml) as the App reads it.

    Exit status: 0 when the file is valid, 1 when it has problems (each printed as
    FILE:LINE: message), 2 when it cannot be read.
    """
    try:
        # One byte past the limit is enough for parse_config to refuse a larger file.
        with Path(file).open("rb") as stream:
            data = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        _fail(f"cannot read {file}: {exc.strerror or exc}")
    # Decoded as the App decodes the file it fetches from GitHub.
    _, problems = parse_config(data.decode("utf-8", errors="replace"))
    for problem in problems:
        where = f"{file}:{problem.line}" if problem.line else file
        click.echo(f"{where}: {problem.message}")
    if problems:
        sys.exit(EXIT_PROBLEMS)
    click.echo(f"{file}: OK")


@main.command("verify-workflow")
def verify_workflow() -> None:
    """Print the workflow that runs findings' tests in a repository's GitHub Actions.

    Save it as .github/workflows/tiebreak-verify.yml on the default branch and name it in
    the config (verify.workflow); the App needs the actions: write permission to run it.
    """
    click.echo(template_text(), nl=False)


@main.command("config-docs")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a file is out of date.")
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=config_docs.ROOT,
    hidden=True,
)
def config_docs_command(check: bool, root: Path) -> None:
    """Generate the config's JSON Schema and README reference from the model.

    Writes docs/config.schema.json and the README section between its config-reference
    markers; with --check, writes nothing and exits 1 if either is out of date.
    """
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


def _run_server(server: Coroutine[None, None, None]) -> None:
    # Ctrl-C is how a server stops: uvicorn shuts down, then raises the signal again; it ends
    # the process quietly, not with click's "Aborted!" among the log lines.
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server)


async def _serve(
    settings: Settings, redis_url: str, host: str, port: int, deps: WorkerSetup | None
) -> None:
    # No log config of uvicorn's own: its lines go through the root handler, JSON and redacted.
    # A webhook's answer is logged by its endpoint, with more than the access line would say.
    logs.skip_access_lines(webhooks.PATH)
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, redis_url), host=host, port=port, log_config=None)
    )
    if deps is None:
        await server.serve()
        return
    # uvicorn owns the signals; when it stops, the workers stop, and arq requeues what they ran.
    workers = Workers(deps, redis_url)
    jobs = asyncio.create_task(workers.run())
    try:
        await server.serve()
    finally:
        await workers.stop()
        await jobs


def _settings(*, web: bool = False, worker: bool = False) -> Settings:
    try:
        settings = get_settings()
        settings.require(web=web, worker=worker)
        if worker:
            settings.private_key()
    except MissingSettings as exc:
        where = f"the environment or {env_file()}" if env_file() else "the environment"
        _fail(f"{exc}; set them in {where} (`tiebreak setup` writes the App's)")
    except (ValidationError, SettingsError) as exc:
        _fail(str(exc).splitlines()[0])
    logs.configure(settings)
    return settings


def _redis_url(settings: Settings) -> str:
    if settings.redis_url is None:
        _fail("REDIS_URL is not set (only `tiebreak serve` starts its own Redis)")
    return settings.redis_url
