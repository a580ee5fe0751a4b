"""`tiebreak setup`: the GitHub App registered from its manifest, its credentials in .env.

What the registration needs (the settings, the manifest, the page's server) is loaded as the
command runs, so that its help and usage errors load nothing but click.
"""

import contextlib
import sys

import click

from app.cli.exits import EXIT_PROBLEMS
from app.cli.exits import fail as _fail
from app.setup import DEFAULT_GITHUB_URL


@click.command()
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
    import asyncio

    from pydantic import ValidationError

    from app.settings import env_file, get_settings, settings_problem
    from app.setup.manifest import api_url_for, base_url, install_url, is_private
    from app.setup.manifest import load_manifest as load_app_manifest
    from app.setup.page import CALLBACK_PATH, listen
    from app.setup.page import serve as serve_registration
    from app.setup.registration import Registration, SetupOptions

    try:
        settings = get_settings()
    except ValidationError as exc:
        _fail(settings_problem(exc))
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
