"""The page `tiebreak setup` serves on 127.0.0.1 while an App is registered.

`GET /` shows what will be registered and a form that posts the manifest to GitHub (no
script: the user presses the button); `GET /callback` is where GitHub sends the browser back.
Once the App's credentials are written, the page says what to do next and the server stops.
"""

import json
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

import jinja2
import uvicorn
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from starlette.background import BackgroundTask

from app.setup.manifest import install_url
from app.setup.registration import Registration, SetupError

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("app", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)

CALLBACK_PATH = "/callback"


def headers(github_url: str, *, referrer: str = "no-referrer") -> dict[str, str]:
    """No script, no framing, no caching; the form may go to GitHub only. The pages GitHub
    sends the browser back to send no Referer: their address holds the code."""
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(github_url))
    return {
        "Content-Security-Policy": (
            "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; "
            f"form-action {origin}; frame-ancestors 'none'"
        ),
        "Referrer-Policy": referrer,
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
    }


def create_registration_app(
    flow: Registration, stop: Callable[[], None], report: Callable[[str], None]
) -> FastAPI:
    """The page's app. `stop` is called once the App is written down; `report` gets each
    failure, for the terminal."""
    app = FastAPI(title="Tiebreak setup", docs_url=None, redoc_url=None, openapi_url=None)
    options = flow.options

    def page(
        name: str,
        status: int = 200,
        task: BackgroundTask | None = None,
        referrer: str = "no-referrer",
        **context: object,
    ) -> HTMLResponse:
        html = TEMPLATES.get_template(name).render(**context)
        policy = headers(options.github_url, referrer=referrer)
        return HTMLResponse(html, status_code=status, headers=policy, background=task)

    @app.get("/", response_class=HTMLResponse)
    async def start() -> HTMLResponse:
        form = flow.start()
        return page(
            "setup.html",
            # The form's POST keeps its Origin header (with no-referrer it would be `null`);
            # this page's address holds nothing secret.
            referrer="strict-origin",
            action=form.action,
            manifest=json.dumps(form.manifest),
            app=flow.manifest,
            org=options.org,
            github_url=options.github_url,
            webhook_url=flow.webhook_url,
            env_file=str(options.env_file),
        )

    @app.get(CALLBACK_PATH, response_class=HTMLResponse)
    async def callback(code: str = "", state: str = "") -> HTMLResponse:
        try:
            registered = await flow.finish(code, state)
        except SetupError as exc:
            report(str(exc))
            return page("message.html", exc.status, heading="Not registered", message=str(exc))
        return page(
            "setup_done.html",
            # After the page is sent: the server stops once the browser has it.
            task=BackgroundTask(stop),
            app=registered,
            install_url=install_url(registered.html_url),
            env_file=str(options.env_file),
            names=list(flow.env_values(registered)),
            public_url=options.public_url,
        )

    return app


def listen(port: int) -> socket.socket:
    """A socket on 127.0.0.1 (on a free port for 0): only a browser on this machine sees the
    page."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


async def serve(flow: Registration, sock: socket.socket, report: Callable[[str], None]) -> None:
    """Serve the page on `sock` until the App is written down, or Ctrl-C."""
    server: uvicorn.Server | None = None

    def stop() -> None:
        if server is not None:
            server.should_exit = True

    app = create_registration_app(flow, stop, report)
    # Warnings and errors only: the terminal is for what the command itself says.
    server = uvicorn.Server(
        uvicorn.Config(app, log_config=None, log_level="warning", access_log=False)
    )
    await server.serve(sockets=[sock])
