"""Files parsed in worker processes: the same outlines as a parse in place, and a parse that
runs out of time or memory stopped, said so, and never holding up the event loop."""

import asyncio
from collections.abc import AsyncIterator

import pytest

from agents.scopes import outline
from app.parsing import Parsing

LEDGER = """\
import decimal


def total(items):
    return sum(price(i) for i in items)


def price(item):
    return decimal.Decimal(item.cents) / 100
"""
CART = """\
function total(items) {
  return items.reduce((sum, item) => sum + item.price, 0);
}
"""
CUBIC_C = "x=>" * 10_000 + "1\n"
"""30 KB that tree-sitter's C grammar takes minutes and tens of gigabytes over."""


@pytest.fixture
async def parsing() -> AsyncIterator[Parsing]:
    # Time runs out first on the hostile file: its memory cap is far away.
    made = Parsing(file_seconds=1.0, memory_mb=8_192)
    try:
        yield made
    finally:
        made.close()


async def test_files_parsed_apart_have_the_outline_a_parse_in_place_gives(
    parsing: Parsing,
) -> None:
    sources = {"ledger.py": LEDGER, "web/cart.js": CART, "README.md": "# Ledger\n"}

    outlines = await parsing.outlines(sources)

    # A file no parser knows is left to the reader: it has no scopes to find.
    assert outlines == {path: outline(path, sources[path]) for path in ("ledger.py", "web/cart.js")}
    assert outlines["ledger.py"].enclosing(9).what == "function price"


async def test_a_parse_past_its_time_is_stopped_and_the_loop_runs_on_meanwhile(
    parsing: Parsing,
) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    try:
        outlines = await parsing.outlines({"cubic.c": CUBIC_C, "ledger.py": LEDGER})
    finally:
        ticker.cancel()

    assert outlines["cubic.c"].unparsed == "its parse took longer than 1 s"
    assert outlines["cubic.c"].scopes == ()
    assert outlines["ledger.py"] == outline("ledger.py", LEDGER)
    # A second of parsing elsewhere: the loop woke the ticker about a hundred times. A parse
    # on the loop's own thread holds the interpreter's lock and lets it run once or twice.
    assert ticks >= 20
    # The stopped process was replaced: the next file is parsed as usual.
    assert await parsing.outlines({"cart.js": CART}) == {"cart.js": outline("cart.js", CART)}


async def test_a_parse_past_its_memory_is_stopped() -> None:
    parsing = Parsing(file_seconds=60.0, memory_mb=256)
    try:
        outlines = await parsing.outlines({"cubic.c": CUBIC_C})
    finally:
        parsing.close()

    assert outlines["cubic.c"].unparsed == "its parse needed more than 256 MB"


async def test_files_not_parsed_when_the_review_s_time_for_parsing_is_spent() -> None:
    parsing = Parsing(file_seconds=60.0, review_seconds=1.0, memory_mb=8_192, processes=1)
    try:
        outlines = await parsing.outlines({"a.c": CUBIC_C, "b.c": CUBIC_C})
    finally:
        parsing.close()

    assert {o.unparsed for o in outlines.values()} == {"all files took longer than 1 s"}


async def test_python_s_own_limits_leave_the_file_without_scopes_and_say_why(
    parsing: Parsing,
) -> None:
    outlines = await parsing.outlines(
        {"sum.py": "x = " + "1+" * 150_000 + "1\n", "neg.py": "x = " + "-" * 200_000 + "1\n"}
    )

    assert outlines["sum.py"].unparsed == "nested too deeply to parse"
    assert outlines["neg.py"].unparsed == "too deep to parse in memory"
