"""A real web server and a real headless Chromium (Debian's), for the transcript page.

Run as a module, it renders the README's screenshot of a transcript:

    uv run python -m tests.kits.browser docs/transcript.png
"""

import asyncio
import contextlib
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import uvicorn
from playwright.async_api import Browser, async_playwright
from redis.asyncio import Redis

from app.links import links_for
from app.settings import Settings
from app.store.embedded import EmbeddedRedis
from app.store.transcripts import TranscriptRecord, TranscriptStore
from app.web.server import create_app
from tests.fakes.loopback import free_port

CHROMIUM_ARGS = [
    # As root in a container, without a GPU, on a machine with no way out: nothing to fetch.
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SETTINGS = Settings(github_webhook_secret="browser-test-secret", public_url="http://127.0.0.1")


def chromium() -> str | None:
    """Debian's Chromium, if this machine has it."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def web_server(redis_url: str, settings: Settings = SETTINGS) -> Iterator[str]:
    """Tiebreak's web app on a real uvicorn server in a thread; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(
        create_app(settings, redis_url), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the web server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


async def keep(redis_url: str, record: TranscriptRecord) -> str:
    """Keep `record` as a finished run would; return the path and query of its link."""
    redis = Redis.from_url(redis_url)
    try:
        await TranscriptStore(redis, SETTINGS.tiebreak_transcript_retention).save(record)
    finally:
        await redis.aclose()
    links = links_for(SETTINGS)
    assert links is not None
    url = links.url(record.run_id)
    assert url is not None
    return url.removeprefix(str(SETTINGS.public_url).rstrip("/"))


@contextlib.asynccontextmanager
async def headless_chromium(executable: str) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def screenshot(target: Path) -> None:
    """The README's screenshot: the sample review's transcript."""
    from tests.kits.transcript import sample_record

    executable = chromium()
    if executable is None:
        raise SystemExit("no Chromium: install Debian's chromium package")
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data), persist=False) as db:
        path = await keep(db.url, await sample_record())
        with web_server(db.url) as base:
            async with headless_chromium(executable) as browser:
                page = await browser.new_page(viewport={"width": 1000, "height": 800})
                await page.goto(base + path)
                await page.click("summary")  # the first unit's model calls, opened
                await page.screenshot(path=str(target), full_page=True)


if __name__ == "__main__":
    asyncio.run(screenshot(Path(sys.argv[1] if len(sys.argv) > 1 else "transcript.png")))
