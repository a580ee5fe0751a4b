"""Fingerprints: the same finding is recognised across pushes and rephrasings, and only then."""

import pytest
from markdown_it import MarkdownIt

from agents.debate.claims import gist, same_gist
from agents.diff import Diff
from agents.protocol import Finding
from app.publishing.fingerprints import Fingerprint
from tests.scenarios.debates import ORDERS, ORDERS_V1, git_diff

CLAIM = "The rate is never checked: a rate above 1 makes the total negative."


def on(text: str, line: int, claim: str = CLAIM, path: str = ORDERS) -> Fingerprint:
    """The fingerprint of a finding on `line` of `path` holding `text`, a new file."""
    diff = Diff.parse(git_diff({path: ("", text)}))
    found = Finding(path=path, start_line=line, end_line=line, severity="major", claim=claim)
    return Fingerprint.of(found, diff)


def test_a_finding_keeps_its_fingerprint_when_lines_above_it_move() -> None:
    moved = "import decimal\n\n\n" + ORDERS_V1
    assert on(moved, 9).same_finding(on(ORDERS_V1, 6))


def test_indentation_and_spacing_do_not_change_the_code() -> None:
    line = "    return order.total * rate"
    respaced = ORDERS_V1.replace(line, "        return order.total  *  rate")
    assert on(respaced, 6).same_finding(on(ORDERS_V1, 6))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("return order.total * rate", "return order.total * min(rate, 1)"),  # its own line
        ("def discount(order, rate):", "def discount(order, rate=0):"),  # the line above
        ("order.total * rate\n\n", "order.total * rate\n    # no cap\n"),  # the line below
    ],
)
def test_a_change_to_its_code_or_the_two_lines_around_it_changes_the_fingerprint(
    old: str, new: str
) -> None:
    changed = ORDERS_V1.replace(old, new)
    assert changed.count("\n") == ORDERS_V1.count("\n")
    assert not on(changed, 6).same_finding(on(ORDERS_V1, 6))


def test_a_change_three_lines_away_leaves_it_alone() -> None:
    changed = ORDERS_V1.replace("    send(order.address)", "    order.carrier.send(order.address)")
    assert on(changed, 6).same_finding(on(ORDERS_V1, 6))


def test_a_rephrased_claim_is_the_same_finding_and_another_claim_is_not() -> None:
    rephrased = "Nothing checks the rate, so a rate over 1 gives a negative total."
    other = "Discounts are computed with floats and lose cents."
    assert on(ORDERS_V1, 6, rephrased).same_finding(on(ORDERS_V1, 6))
    assert not on(ORDERS_V1, 6, other).same_finding(on(ORDERS_V1, 6))


def test_the_same_claim_on_another_file_is_another_finding() -> None:
    assert not on(ORDERS_V1, 6, path="app/other.py").same_finding(on(ORDERS_V1, 6))


def test_gists_ignore_case_stop_words_and_word_endings() -> None:
    assert gist("The refund RAISES NameError") == gist("refund raise nameerror")
    assert same_gist((), ())
    assert not same_gist((), ("refund",))


def test_the_marker_is_read_back_from_the_last_line_only() -> None:
    fingerprint = on(ORDERS_V1, 6)
    body = f"**🟠 Major** · unresolved\n\nSome text.\n\n{fingerprint.marker(ORDERS)}"
    assert Fingerprint.from_comment(ORDERS, body) == fingerprint
    assert Fingerprint.from_comment(ORDERS, body + "\n\nA person's edit.") is None
    quoted = f"{fingerprint.marker(ORDERS)}\n\nA suggestion quoting a marker, then the footer."
    assert Fingerprint.from_comment(ORDERS, quoted) is None
    assert Fingerprint.from_comment(ORDERS, "<!-- tiebreak:finding:nothex:a -->") is None


def test_a_comment_on_its_finding_s_file_keeps_the_marker_it_always_had() -> None:
    """Markers already on pull requests name no file: they are of a finding on the file the
    comment is on, as a comment on its finding's file is still marked."""
    fingerprint = on(ORDERS_V1, 6)
    marker = f"<!-- tiebreak:finding:{fingerprint.code}:{'+'.join(fingerprint.gist)} -->"

    assert fingerprint.marker(ORDERS) == marker
    assert Fingerprint.from_comment(ORDERS, f"Some text.\n\n{marker}") == fingerprint
    assert Fingerprint.from_comment(ORDERS, "<!-- tiebreak:finding:0123456789abcdef: -->") == (
        Fingerprint(path=ORDERS, code="0123456789abcdef", gist=())
    )


def test_a_comment_on_another_file_is_read_back_as_its_finding_s() -> None:
    """A fix suggested on another file than its finding's: its thread is still the finding's."""
    fingerprint = on(ORDERS_V1, 6)
    body = f"A fix, on its patch's lines.\n\n{fingerprint.marker('app/caller.py')}"

    read = Fingerprint.from_comment("app/caller.py", body)

    assert read == fingerprint
    assert read is not None
    assert read.same_finding(on(ORDERS_V1, 6))


@pytest.mark.parametrize(
    "path",
    ["app/a -->\n<b>x</b>.py", "app/ünï côdé/%41.py", "app/--!>.py", "app/a:b+c.py"],
    ids=["ends the comment", "not ASCII", "ends it loosely", "the marker's separators"],
)
def test_a_finding_s_file_stays_inside_the_hidden_line_whatever_its_name(path: str) -> None:
    fingerprint = on(ORDERS_V1, 6).model_copy(update={"path": path})

    marker = fingerprint.marker("app/caller.py")

    assert "\n" not in marker
    assert marker.startswith("<!-- tiebreak:finding:")
    assert marker.endswith(" -->")
    assert marker.count("<") == marker.count(">") == 1
    assert "--!" not in marker
    rendered = MarkdownIt("commonmark").render(f"A fix.\n\n{marker}")
    assert rendered == f"<p>A fix.</p>\n{marker}"  # one HTML comment: nothing shows
    assert Fingerprint.from_comment("app/caller.py", marker) == fingerprint


@pytest.mark.parametrize(
    "marker",
    [
        "<!-- tiebreak:finding:0123456789abcdef:rate:app/%FF.py -->",  # not UTF-8
        "<!-- tiebreak:finding:0123456789abcdef:rate:app/a b.py -->",  # not as Tiebreak writes
        "<!-- tiebreak:finding:0123456789abcdef:rate: -->",
        "<!-- tiebreak:finding:0123456789abcdef:rate:app/a.py:app/b.py -->",
    ],
)
def test_a_marker_naming_a_file_tiebreak_would_not_write_is_no_finding_s(marker: str) -> None:
    assert Fingerprint.from_comment("app/caller.py", f"Text.\n\n{marker}") is None
