"""The transcript page in a real headless Chromium, served by a real uvicorn server.

What a reader's browser does with the page: it shows the debate, it runs none of the scripts
a hostile pull request smuggles into it, and a line a hundred thousand characters wide
scrolls inside its box instead of stretching the page.
"""

from pathlib import Path

import pytest
from playwright.async_api import Browser, Page

from tests.kits.browser import chromium, headless_chromium, keep, web_server
from tests.kits.transcript import HOSTILE_CLAIM, HOSTILE_TITLE, hostile_record, sample_record

CHROMIUM = chromium()

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on this machine: install Debian's chromium package (.ci/run does)",
)


class Watched:
    """A page, and what it tried to do behind the reader's back."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("dialog", lambda dialog: self.dialogs.append(dialog.message))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("request", lambda request: self.requests.append(request.url))


async def open_page(browser: Browser, url: str) -> Watched:
    page = await browser.new_page(viewport={"width": 1200, "height": 900})
    watched = Watched(page)
    response = await page.goto(url)
    assert response is not None
    assert response.status == 200
    return watched


async def test_the_transcript_shows_the_debate(redis_url: str, tmp_path: Path) -> None:
    """Slow at times (2–9 s in a suite run, under 2 s alone): a Chromium and a uvicorn server
    start, on cores the suite's other worker keeps busy."""
    assert CHROMIUM is not None
    path = await keep(redis_url, await sample_record())
    with web_server(redis_url) as base:
        async with headless_chromium(CHROMIUM) as browser:
            watched = await open_page(browser, base + path)
            page = watched.page

            assert await page.title() == "octo/shop#7 · Tiebreak"
            assert await page.locator("h1").inner_text() == (
                "octo/shop#7 · Split payments in cents"
            )
            findings = page.locator("article.finding")
            assert await findings.count() == 2
            fixed, warned = findings.nth(0), findings.nth(1)
            assert "unanimous" in await fixed.locator("header").inner_text()
            assert "+    logger.info(" in await fixed.locator("pre.diff").inner_text()
            assert "arbiter" in await warned.locator("header").inner_text()
            assert "Warning: Splits lose up to one cent per part" in await warned.inner_text()
            # Three budget charts, drawn.
            charts = page.locator("svg.chart")
            assert await charts.count() == 3
            box = await charts.first.bounding_box()
            assert box is not None
            assert box["width"] > 100
            # The model calls fold away until asked for.
            calls = page.locator("details table")
            assert not await calls.is_visible()
            await page.click("summary")
            assert await calls.is_visible()
            assert await calls.locator("tbody tr").count() == 5
            await page.screenshot(path=str(tmp_path / "transcript.png"), full_page=True)

            assert watched.errors == []
            assert watched.requests == [base + path]  # nothing else fetched


async def test_a_hostile_pull_request_is_harmless(redis_url: str) -> None:
    assert CHROMIUM is not None
    path = await keep(redis_url, await hostile_record())
    with web_server(redis_url) as base:
        async with headless_chromium(CHROMIUM) as browser:
            watched = await open_page(browser, base + path)
            page = watched.page

            assert await page.evaluate("typeof window.pwned") == "undefined"
            assert await page.evaluate("document.querySelectorAll('script, img').length") == 0
            assert watched.dialogs == []
            assert watched.errors == []
            assert watched.requests == [base + path]
            # Shown as the text it is.
            assert HOSTILE_TITLE in await page.locator("h1").inner_text()
            assert HOSTILE_CLAIM in await page.locator("article.finding").first.inner_text()
            # The page keeps the window's width; the wide line scrolls in its own box.
            assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            wide = page.locator("pre.diff").nth(1)
            assert await wide.evaluate("e => e.scrollWidth > 100 * e.clientWidth")
            assert "A" * 1000 in await wide.inner_text()


async def test_a_forged_link_shows_nothing(redis_url: str) -> None:
    assert CHROMIUM is not None
    path = await keep(redis_url, await sample_record())
    forged = path[: path.index("token=") + len("token=")] + "forged"
    with web_server(redis_url) as base:
        async with headless_chromium(CHROMIUM) as browser:
            page = await browser.new_page()
            response = await page.goto(base + forged)

            assert response is not None
            assert response.status == 404
            assert await page.locator("h1").inner_text() == "Not found"
            assert "Split payments" not in await page.content()
