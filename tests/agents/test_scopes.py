"""Where a changed line sits in its file: one outline of the file answers for all its lines —
the innermost scope, a window where none holds the line, the helpers the lines call."""

import pytest

from agents.context.scopes import WINDOW, Scope, outline

LEDGER = '''\
"""Ledger."""


def cents(amount):
    return int(amount * 100)


def rounded(amount):
    return round(amount, 2)


class Ledger:
    @property
    def total(self):
        return cents(self.amount) + rounded(self.fee)

    def post(self, entry):
        self.check(entry)
        value = rounded(cents(entry.amount))
        return missing(value) + cents(value)

    def check(self, entry):
        def inner():
            return entry.ok
        return inner()
''' + "".join(f"LIMIT_{n} = {n}\n" for n in range(60))


def test_one_outline_gives_each_line_its_innermost_scope_or_a_window() -> None:
    parsed = outline("ledger.py", LEDGER)

    assert parsed.enclosing(5) == Scope(4, 5, "function cents")
    # A decorator belongs to its function, which sits inside its class.
    assert parsed.enclosing(13) == Scope(13, 15, "function total")
    assert parsed.enclosing(16) == Scope(12, 25, "class Ledger")
    assert parsed.enclosing(24) == Scope(23, 24, "function inner")
    assert parsed.enclosing(25) == Scope(22, 25, "function check")
    # No scope holds a constant far below: a window around it, cut at the file's end.
    assert parsed.enclosing(80) == Scope(80 - WINDOW, 86, f"lines {80 - WINDOW}-86")
    assert parsed.enclosing(1) == Scope(1, 1 + WINDOW, f"lines 1-{1 + WINDOW}")


def test_the_helpers_lines_call_come_in_the_order_they_are_first_called() -> None:
    parsed = outline("ledger.py", LEDGER)

    # `missing` is defined nowhere in the file; `self.check` is a method of it.
    assert [s.what for s in parsed.callees([18, 19, 20])] == [
        "function check",
        "function rounded",
        "function cents",
    ]
    assert [s.what for s in parsed.callees([20, 20])] == ["function cents"]
    assert [s.what for s in parsed.callees({15})] == ["function cents", "function rounded"]
    assert parsed.callees([2, 80]) == []


def test_other_languages_get_scopes_and_no_callees_and_unknown_files_neither() -> None:
    script = (
        "const one = () => { return 1; };\n"
        "export class Cart {\n"
        "  add(item: Item): void {\n"
        "    this.items.push(item);\n"
        "  }\n"
        "}\n"
    )

    parsed = outline("web/cart.ts", script)

    assert parsed.enclosing(4) == Scope(3, 5, "method add")
    assert parsed.enclosing(6) == Scope(2, 6, "class Cart")
    # A scope on one line is no scope: the window around it.
    assert parsed.enclosing(1) == Scope(1, 7, "lines 1-7")
    assert parsed.callees([4]) == []
    assert outline("notes.txt", "a\nb\n").enclosing(2) == Scope(1, 3, "lines 1-3")
    assert outline("broken.py", "def f(:\n").scopes == ()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # Python's parser recurses on a long chain of operators…
        ("x = " + "1+" * 150_000 + "1\n", "nested too deeply to parse"),
        # …and gives up for memory on a long chain of unary ones.
        ("x = " + "-" * 200_000 + "1\n", "too deep to parse in memory"),
    ],
)
def test_a_python_file_beyond_the_parser_s_limits_has_no_scopes_and_says_why(
    text: str, why: str
) -> None:
    parsed = outline("deep.py", text)

    assert (parsed.scopes, parsed.unparsed) == ((), why)
    assert parsed.enclosing(1) == Scope(1, 2, "lines 1-2")
