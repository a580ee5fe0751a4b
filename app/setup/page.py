"""The page `tiebreak setup` serves on 127.0.0.1 while an App is registered.

`GET /` shows what will be registered and a form that posts the manifest to GitHub (no
script: the user presses the button), and sets a cookie its state is bound to; `GET /callback`
is where GitHub sends the browser back, and it must come back with that cookie. Once the App's
credentials are written, the page says what to do next and the server stops.

The page answers only at the address the command printed (`127.0.0.1:PORT`, the `Host` of its
`redirect_url`): a request for any other host — a page whose name was rebound to 127.0.0.1
(DNS rebinding) — is answered 400, with no form, no state and no cookie.
"""

import json
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

import jinja2
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse
from starlette.background import BackgroundTask
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.setup.manifest import install_url
from app.setup.registration import FLOW_LIFETIME, Registration, SetupError
from app.verification.workflow import WORKFLOW_FILE, template_text

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("app", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)

CALLBACK_PATH = "/callback"

COOKIE = "tiebreak_setup"
"""The cookie `GET /` sets: the page's state is bound to its value."""


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


class LoopbackOnly:
    """Answers 400 to every request whose `Host` is not `host` (exactly one header, exactly
    that value), before the app sees it; `refused` gets a line for the terminal."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        host: str,
        github_url: str,
        refused: Callable[[str], None],
    ) -> None:
        self.app = app
        self.host = host
        self.github_url = github_url
        self.refused = refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            hosts = Headers(scope=scope).getlist("host")
            if hosts != [self.host]:
                # repr: what a request sent never reaches the terminal raw.
                asked = repr(", ".join(hosts)[:100]) if hosts else "no host"
                self.refused(
                    f"refused a request for {asked}: this page answers only at "
                    f"http://{self.host}/ (open that address; a request for another name may "
                    "be a page of another site reaching this one by DNS rebinding). Nothing "
                    "was done."
                )
                response = PlainTextResponse(
                    "This page answers only at the address `tiebreak setup` printed.\n",
                    status_code=400,
                    headers=headers(self.github_url),
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def browser_of(request: Request) -> str:
    """The page's cookie in the request, "" unless it is there exactly once: a second one
    (another page on 127.0.0.1, whose cookies ports do not separate, set it) is refused too."""
    values = [
        value.strip()
        for header in request.headers.getlist("cookie")
        for name, _, value in (pair.partition("=") for pair in header.split(";"))
        if name.strip() == COOKIE
    ]
    return values[0] if len(values) == 1 else ""


def create_registration_app(
    flow: Registration, stop: Callable[[], None], report: Callable[[str], None]
) -> FastAPI:
    """The page's app, answering only at the host of the flow's `redirect_url`. `stop` is
    called once the App is written down; `report` gets each failure, for the terminal."""
    app = FastAPI(title="Tiebreak setup", docs_url=None, redoc_url=None, openapi_url=None)
    options = flow.options
    app.add_middleware(
        LoopbackOnly,
        host=urlsplit(flow.redirect_url).netloc,
        github_url=options.github_url,
        refused=report,
    )
    page = _Pages(options.github_url)

    @app.get("/", response_class=HTMLResponse)
    async def start() -> HTMLResponse:
        return _start(flow, page)

    @app.get(CALLBACK_PATH, response_class=HTMLResponse)
    async def callback(request: Request, code: str = "", state: str = "") -> HTMLResponse:
        try:
            registered = await flow.finish(code, state, browser_of(request))
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
            workflow=template_text(),
            workflow_file=WORKFLOW_FILE,
        )

    return app


class _Pages:
    """The setup page's templates, each sent with the page's security headers."""

    def __init__(self, github_url: str) -> None:
        self.github_url = github_url

    def __call__(
        self,
        name: str,
        status: int = 200,
        task: BackgroundTask | None = None,
        referrer: str = "no-referrer",
        **context: object,
    ) -> HTMLResponse:
        html = TEMPLATES.get_template(name).render(**context)
        policy = headers(self.github_url, referrer=referrer)
        return HTMLResponse(html, status_code=status, headers=policy, background=task)


def _start(flow: Registration, page: _Pages) -> HTMLResponse:
    """The page that posts the manifest to GitHub, with a fresh state bound to the browser."""
    form, options = flow.start(), flow.options
    response = page(
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
    # Lax: sent with GitHub's top-level redirect back. Not Secure: the page is plain http on
    # the loopback. A fresh value on every visit: only the latest form's state works.
    response.set_cookie(
        COOKIE,
        form.browser,
        max_age=int(FLOW_LIFETIME),
        path="/",
        httponly=True,
        samesite="lax",
    )
    return response


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
