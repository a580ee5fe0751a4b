"""`GET /runs/{id}?token=…`: a run's debate, message by message, as one server-rendered page.

The page shows private code, so it answers only a valid link (:mod:`app.links`); any other
request — no token, a forged or expired one, a run that is not (or no longer) kept — gets the
same 404, which says nothing about which it was. The page runs no script at all and its
Content-Security-Policy forbids any; every value is escaped by the template engine; it is
neither cached nor indexed, and it sends no Referer, which would carry the token away.
"""

from typing import Annotated

import jinja2
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from app.links import TranscriptLinks
from app.store.connection import STORE_ERRORS
from app.store.transcripts import TranscriptStore
from app.web.transcript_view import CHART_HEIGHT, CHART_WIDTH, run_view

HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "X-Robots-Tag": "noindex, nofollow",
}

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("app", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
TEMPLATES.filters["n"] = lambda value: f"{value:,}"

NOT_FOUND = (
    "This transcript does not exist, or the link to it is not valid. Tiebreak keeps "
    "transcripts for a limited time, and their links expire with them."
)
UNAVAILABLE = "Tiebreak cannot read its transcripts right now. Try again in a minute."

router = APIRouter()


class TranscriptPages:
    """What the page needs, built once per process."""

    def __init__(self, store: TranscriptStore, links: TranscriptLinks | None) -> None:
        self.store = store
        self.links = links
        """None when this server cannot check links: then no transcript is shown."""


@router.get("/runs/{run_id:path}", response_class=HTMLResponse)
async def transcript_page(
    request: Request, run_id: str, token: Annotated[str, Query()] = ""
) -> HTMLResponse:
    pages: TranscriptPages = request.app.state.transcripts
    if pages.links is None or not pages.links.valid(run_id, token):
        return not_found()
    try:
        record = await pages.store.load(run_id)
    except STORE_ERRORS:
        return _page("message.html", status=503, heading="Unavailable", message=UNAVAILABLE)
    if record is None:
        return not_found()
    return _page("run.html", run=run_view(record), width=CHART_WIDTH, height=CHART_HEIGHT)


def not_found() -> HTMLResponse:
    return _page("message.html", status=404, heading="Not found", message=NOT_FOUND)


def _page(name: str, *, status: int = 200, **context: object) -> HTMLResponse:
    html = TEMPLATES.get_template(name).render(**context)
    return HTMLResponse(html, status_code=status, headers=HEADERS)
