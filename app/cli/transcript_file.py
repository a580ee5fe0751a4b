"""A review's transcript page as a local file, for `tiebreak demo`: the page the App serves
at `/runs/{id}` (:mod:`app.web.transcript_page`), rendered from the same view and template,
its link printed and opened in a browser where there is one.

The page runs no script and loads nothing (its styles are inline), so a file shows it whole,
without a server to keep running once the command has ended.
"""

import os
import sys
import webbrowser
from dataclasses import replace
from pathlib import Path

from app.store.transcripts import TranscriptRecord
from app.web.transcript_page import TEMPLATES
from app.web.transcript_view import CHART_HEIGHT, CHART_WIDTH, run_view

PAGE_NAME = "transcript.html"


def write_transcript(record: TranscriptRecord, directory: Path, notice: str = "") -> str:
    """The run's transcript page written in `directory`, with `notice` above all else: its
    `file://` link."""
    view = replace(run_view(record), notice=notice)
    html = TEMPLATES.get_template("run.html").render(
        run=view, width=CHART_WIDTH, height=CHART_HEIGHT
    )
    page = directory / PAGE_NAME
    page.write_text(html, encoding="utf-8")
    return page.resolve().as_uri()


def open_in_browser(url: str) -> bool:
    """Whether a browser was asked to open `url`. On a Unix without a display nothing is
    opened, unless `BROWSER` names a browser: the one Python would find there is a console
    browser, which would take the terminal over from the command."""
    graphical = any(os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"))
    if sys.platform not in ("darwin", "win32") and not graphical:
        return False
    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False
