"""The rest of a repository read across its files: the definitions a change uses, followed
through imports; the callers and tests of the functions it changes; all within bounds."""

from collections.abc import Iterator

import pytest

from agents.context.reading import unit_context
from agents.context.related import FALLBACK, PARTIAL, Bounds, Excerpt, ExcerptKind, Related, related
from agents.diff import Diff
from agents.models.tokens import typical_tokens
from tests.scenarios.debates import git_diff
from tests.scenarios.orders import CONTRACT, FILES, ORDERS, MemoryTree, diff_text


def found(kind: ExcerptKind, tree: MemoryTree | None = None) -> list[Excerpt]:
    result = related(Diff.parse(diff_text()), tree or MemoryTree())
    return [e for e in result.excerpts if e.kind is kind]


def test_the_helpers_a_change_uses_are_found_through_its_imports() -> None:
    definitions = found(ExcerptKind.DEFINITION)

    # `cents` is `parse_cents` imported under another name; `discount`, a package's re-export.
    assert [(e.path, e.lines[0]) for e in definitions] == [
        ("shop/utils.py", "def parse_cents(label):"),
        ("shop/pricing.py", "def discount(amount, code):"),
    ]
    assert f"    {CONTRACT}" in definitions[0].lines
    assert {e.origin for e in definitions} == {ORDERS}


def test_a_changed_signature_brings_its_callers_from_other_files_and_its_test() -> None:
    callers = found(ExcerptKind.CALLER)
    tests = found(ExcerptKind.TEST)

    # Called as `orders.order_total(…)` and as `total_of(…)`; legacy's own `order_total`,
    # which nothing imports, is another function.
    assert [(e.path, e.first) for e in callers] == [
        ("shop/checkout.py", 6),
        ("shop/invoices.py", 6),
    ]
    assert "    due = orders.order_total(basket.order)" in callers[0].lines
    assert [e.path for e in tests] == ["tests/test_orders.py"]
    assert "    assert order_total(order) == 0" in tests[0].lines


def test_a_long_caller_is_shown_by_the_lines_around_its_call() -> None:
    long = "\n".join(f"    step_{n} = {n}" for n in range(60))
    files = dict(FILES)
    files["shop/checkout.py"] = (
        f"from shop import orders\n\n\ndef checkout(basket):\n{long}\n"
        "    due = orders.order_total(basket.order)\n    return due\n"
    )

    caller, _ = found(ExcerptKind.CALLER, MemoryTree(files))

    assert (caller.path, caller.first, caller.last) == ("shop/checkout.py", 62, 66)
    assert caller.lines[3] == "    due = orders.order_total(basket.order)"


def many_files(count: int) -> dict[str, str]:
    return FILES | {f"shop/filler_{n:04}.py": "from shop import orders\n" for n in range(count)}


@pytest.mark.parametrize(
    ("tree", "bounds", "note"),
    [
        (MemoryTree(many_files(30)), Bounds(listed=20), f"{FALLBACK}: the repository has more"),
        (MemoryTree(), Bounds(files=3), f"{PARTIAL}: the search stops after 3 files"),
        (
            MemoryTree(many_files(3)),
            Bounds(bytes=300),
            f"{PARTIAL}: the search stops after 300 bytes",
        ),
    ],
    ids=["too many files", "files read", "bytes read"],
)
def test_the_search_stops_at_its_bounds_and_says_so(
    tree: MemoryTree, bounds: Bounds, note: str
) -> None:
    result = related(Diff.parse(diff_text()), tree, bounds)

    assert result.note.startswith(note)
    assert len(set(tree.read_paths)) <= min(bounds.files, len(tree.files))
    if note.startswith(FALLBACK):
        assert result.excerpts == ()
        assert tree.read_paths == []


def test_the_search_stops_when_its_time_is_spent() -> None:
    ticks: Iterator[float] = iter(range(0, 1_000, 4))

    result = related(
        Diff.parse(diff_text()), MemoryTree(), Bounds(seconds=10), clock=lambda: next(ticks)
    )

    assert result.note == f"{PARTIAL}: the search stops after 10 s"


def test_an_unparsable_or_unreadable_file_resolves_nothing() -> None:
    files = FILES | {"shop/utils.py": "def parse_cents(label:\n", "shop/pricing.py": None}
    tree = MemoryTree({p: t for p, t in files.items() if t is not None})

    assert found(ExcerptKind.DEFINITION, tree) == []


def test_other_languages_find_definitions_by_name() -> None:
    before = "export function total(items) {\n  return items.length;\n}\n"
    after = "export function total(items) {\n  return items.map(priceOf).length;\n}\n"
    files = {
        "web/cart.ts": after,
        "web/prices.ts": "export function priceOf(item) {\n  return item.cents;\n}\n",
        "web/other.js": "function priceOf(item) {\n  return 0;\n}\n",
    }
    diff = Diff.parse(git_diff({"web/cart.ts": (before, after)}))

    (definition,) = related(diff, MemoryTree(files)).excerpts

    assert (definition.path, definition.kind) == ("web/prices.ts", ExcerptKind.DEFINITION)
    assert definition.lines[0] == "export function priceOf(item) {"


def test_a_unit_gets_the_excerpts_of_its_own_changes_only() -> None:
    diff = Diff.parse(diff_text())
    result = related(diff, MemoryTree())
    other = Diff.parse(git_diff({"shop/pricing.py": (FILES["shop/pricing.py"], "x = 1\n")}))

    assert [e.kind for e in result.of(diff)] == sorted(e.kind for e in result.excerpts)
    assert result.of(other) == []


def test_the_context_ranks_definitions_then_callers_then_tests_within_its_budget() -> None:
    diff = Diff.parse(diff_text())
    found = related(diff, MemoryTree())
    roomy = unit_context(diff, {ORDERS: FILES[ORDERS]}, 4_000, found)
    # The diff rewrites `order_total` whole, so the whole small file is the least relevant.
    tight = unit_context(diff, {ORDERS: FILES[ORDERS]}, typical_tokens(roomy) - 180, found)

    shown, left_out = tight.split("Left out for the context budget")

    assert f"    9     {CONTRACT}" in roomy
    assert "tests/test_orders.py lines 6-8" in roomy
    # The least relevant goes first: the whole file, then the test, after the definitions
    # and the callers.
    assert f"    9     {CONTRACT}" in shown
    assert "    8     due = orders.order_total(basket.order)" in shown
    assert "tests/test_orders.py" not in shown
    assert "tests/test_orders.py lines 6-8" in left_out
    assert f"{ORDERS} lines 1-10 (the whole file)" in left_out


def test_a_search_that_did_not_run_is_said_once_and_the_changed_code_still_shown() -> None:
    diff = Diff.parse(diff_text())
    note = f"{FALLBACK}: the search took longer than 10 s"

    context = unit_context(diff, {ORDERS: FILES[ORDERS]}, None, Related(note=note))

    assert context.count(FALLBACK) == 1
    assert "def order_total(order, currency):" in context


def test_an_excerpt_that_ends_on_blank_lines_is_shown_with_them() -> None:
    diff = Diff.parse(diff_text())
    excerpt = Excerpt("shop/notes.py", 3, ("def note():", "    pass", ""), "function note",
                      ExcerptKind.CALLER, ORDERS, (7, 10))  # fmt: skip

    context = unit_context(diff, {ORDERS: FILES[ORDERS]}, 4_000, Related((excerpt,)))

    assert (
        "shop/notes.py lines 3-5: function note\n    3 def note():\n    4     pass\n    5 \n"
        in context
    )


def test_a_changed_constructor_brings_the_places_that_build_its_class() -> None:
    before = "class Cart:\n    def __init__(self, items):\n        self.items = items\n"
    after = "class Cart:\n    def __init__(self, items, currency):\n        self.items = items\n"
    files = {
        "shop/cart.py": after,
        "shop/api.py": "from shop.cart import Cart\n\n\ndef make():\n    return Cart([])\n",
        "shop/other.py": "def make():\n    return dict(__init__=1)\n",
    }
    diff = Diff.parse(git_diff({"shop/cart.py": (before, after)}))

    (caller,) = related(diff, MemoryTree(files)).excerpts

    assert (caller.path, caller.lines) == ("shop/api.py", ("def make():", "    return Cart([])"))
