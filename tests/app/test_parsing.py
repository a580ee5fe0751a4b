"""Files parsed in worker processes: the same outlines as a parse in place, and a parse that
runs out of time or memory stopped, said so, and never holding up the event loop."""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agents.context.reading import Reading, unit_context
from agents.context.related import FALLBACK, Bounds, Related
from agents.context.scopes import outline
from agents.diff import Diff
from agents.models.llm import Role
from agents.models.scripted import ScriptedLLM, by_role
from agents.review import review_diff
from app.parsing import Parsing
from tests.scenarios import orders
from tests.scenarios.debates import git_diff, report

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


async def test_a_bug_that_needs_another_module_s_helper_reaches_the_tester_with_the_callers(
    parsing: Parsing, tmp_path: Path
) -> None:
    diff = Diff.parse(orders.diff_text())
    found = await parsing.related(orders.write(tmp_path), diff)
    llm = ScriptedLLM(by_role(tester=[report()]))

    reading = Reading({orders.ORDERS: orders.ORDERS_AFTER}, related=found)
    await review_diff(diff, llm, reading=reading)

    (seed,) = llm.calls(Role.TESTER)
    context = "".join(block.text for block in seed.blocks)
    assert orders.CONTRACT not in diff.text
    assert f"    9     {orders.CONTRACT}" in context
    # The changed signature's callers in two other files, and the project's test of it.
    assert "    8     due = orders.order_total(basket.order)" in context
    assert '    7     return f"Total: {total_of(order) / 100:.2f}"' in context
    assert "    8     assert order_total(order) == 0" in context
    assert "legacy" not in context


async def test_a_search_past_its_time_is_stopped_said_once_and_the_loop_runs_on(
    tmp_path: Path,
) -> None:
    before = "int total(int n) {\n  return n;\n}\n"
    after = "int total(int n) {\n  return price(n);\n}\n"
    write_files(tmp_path, {"lib/cart.c": after, "lib/price.c": "int price(int n);\n" + CUBIC_C})
    diff = Diff.parse(git_diff({"lib/cart.c": (before, after)}))
    parsing = Parsing(memory_mb=8_192, related_bounds=Bounds(seconds=0.5))
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    try:
        found = await parsing.related(tmp_path, diff)
        # The stopped process was replaced: the next search runs as usual.
        again = await parsing.related(
            orders.write(tmp_path / "shop"), Diff.parse(orders.diff_text())
        )
    finally:
        ticker.cancel()
        parsing.close()

    assert found == Related(note=f"{FALLBACK}: the search took longer than 0.5 s")
    assert ticks >= 20
    assert again.excerpts
    context = unit_context(diff, {"lib/cart.c": after}, None, found)
    assert context.count(FALLBACK) == 1
    assert "  2   return price(n);" in context


async def test_a_repository_with_too_many_files_is_not_searched(tmp_path: Path) -> None:
    orders.write(tmp_path)
    parsing = Parsing(related_bounds=Bounds(listed=5))
    try:
        found = await parsing.related(tmp_path, Diff.parse(orders.diff_text()))
    finally:
        parsing.close()

    assert found == Related(note=f"{FALLBACK}: the repository has more than 5 files")


def write_files(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


async def test_a_search_past_its_memory_is_stopped_and_said(tmp_path: Path) -> None:
    before = "int total(int n) {\n  return n;\n}\n"
    after = "int total(int n) {\n  return price(n);\n}\n"
    write_files(tmp_path, {"lib/cart.c": after, "lib/price.c": "int price(int n);\n" + CUBIC_C})
    parsing = Parsing(memory_mb=256, related_bounds=Bounds(seconds=60))
    try:
        found = await parsing.related(
            tmp_path, Diff.parse(git_diff({"lib/cart.c": (before, after)}))
        )
    finally:
        parsing.close()

    assert found == Related(note=f"{FALLBACK}: the search needed more than 256 MB")
