"""Diff parsing, RIGHT-side lines, hunk lookup and review units."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from unidiff.patch import PatchSet

from agents.diff import DEFAULT_UNIT_TOKENS, Diff, DiffFile, Hunk
from agents.errors import DiffError
from agents.models.tokens import typical_tokens
from policies.errors import TiebreakError

MODIFIED = """\
diff --git a/src/calc.py b/src/calc.py
index 3b18e51..a9c4f2d 100644
--- a/src/calc.py
+++ b/src/calc.py
@@ -1,5 +1,6 @@
 import math
+import logging
\x20
\x20
 def area(r):
     return math.pi * r * r
@@ -20,7 +21,4 @@ def area(r):
 def total(xs):
-    s = 0
-    for x in xs:
-        s += x
-    return s
+    return sum(xs)
\x20
\x20
"""

ADDED = """\
diff --git a/docs/usage.md b/docs/usage.md
new file mode 100644
index 0000000..e5f1c2a
--- /dev/null
+++ b/docs/usage.md
@@ -0,0 +1,3 @@
+# Usage
+
+Run `calc --help`.
"""

DELETED = """\
diff --git a/src/legacy.py b/src/legacy.py
deleted file mode 100644
index 7d1e2f3..0000000
--- a/src/legacy.py
+++ /dev/null
@@ -1,3 +0,0 @@
-def old():
-    return None
-
"""

BINARY = """\
diff --git a/assets/logo.png b/assets/logo.png
index 1f2e3d4..5a6b7c8 100644
Binary files a/assets/logo.png and b/assets/logo.png differ
"""

RENAMED = """\
diff --git a/lib/helpers.py b/lib/utils.py
similarity index 88%
rename from lib/helpers.py
rename to lib/utils.py
index 0a1b2c3..4d5e6f7 100644
--- a/lib/helpers.py
+++ b/lib/utils.py
@@ -1,3 +1,3 @@
 def clamp(x, lo, hi):
-    return max(lo, min(x, hi))
+    return min(hi, max(lo, x))
\x20
"""

PURE_RENAME = """\
diff --git a/notes/a.txt b/notes/b.txt
similarity index 100%
rename from notes/a.txt
rename to notes/b.txt
"""

NO_NEWLINE = """\
diff --git a/VERSION b/VERSION
index 1111111..2222222 100644
--- a/VERSION
+++ b/VERSION
@@ -1,2 +1,2 @@
 project
-1.0.0
\\ No newline at end of file
+1.1.0
\\ No newline at end of file
"""

# What git prints for a file with Windows line endings: git's own lines end in LF, the file's
# lines keep their CR.
CRLF_CONTENT = (
    "diff --git a/scripts/build.bat b/scripts/build.bat\n"
    "index 3c4d5e6..7f8a9b0 100644\n"
    "--- a/scripts/build.bat\n"
    "+++ b/scripts/build.bat\n"
    "@@ -1,3 +1,3 @@\n"
    " @echo off\r\n"
    "-echo building\r\n"
    "+echo building release\r\n"
    " exit /b 0\r\n"
)

# `git diff -U0`: a one-line change, then two lines removed with nothing left in their place.
ZERO_CONTEXT = """\
diff --git a/src/log.py b/src/log.py
index 1111111..2222222 100644
--- a/src/log.py
+++ b/src/log.py
@@ -3 +3 @@ def setup():
-    level = "DEBUG"
+    level = "INFO"
@@ -10,2 +9,0 @@ def setup():
-    print("debug")
-    print("debug")
"""

WHOLE = MODIFIED + ADDED + DELETED + BINARY + RENAMED + PURE_RENAME + NO_NEWLINE

CALC_RIGHT = {
    1: "import math",
    2: "import logging",
    3: "",
    4: "",
    5: "def area(r):",
    6: "    return math.pi * r * r",
    21: "def total(xs):",
    22: "    return sum(xs)",
    23: "",
    24: "",
}


def right_side(diff_file: DiffFile) -> dict[int, str]:
    return {n: text for hunk in diff_file.hunks for n, text in hunk.lines.items()}


def right_side_of(diff: Diff, path: str) -> dict[int, str]:
    diff_file = diff.file(path)
    assert diff_file is not None, f"{path} missing from {diff.paths}"
    return right_side(diff_file)


def hunk_keys(diff: Diff) -> list[tuple[str, int, str]]:
    return [(f.path, h.target_start, h.text) for f in diff.files for h in f.hunks]


# --- parsing -----------------------------------------------------------------------------


def test_parse_lists_every_file_in_order() -> None:
    diff = Diff.parse(WHOLE)

    assert diff.paths == (
        "src/calc.py",
        "docs/usage.md",
        "src/legacy.py",
        "assets/logo.png",
        "lib/utils.py",
        "notes/b.txt",
        "VERSION",
    )


def test_parse_keeps_the_diff_text() -> None:
    assert Diff.parse(WHOLE).text == WHOLE


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        pytest.param(MODIFIED, "src/calc.py", CALC_RIGHT, id="modified-two-hunks"),
        pytest.param(
            ADDED,
            "docs/usage.md",
            {1: "# Usage", 2: "", 3: "Run `calc --help`."},
            id="added",
        ),
        pytest.param(
            RENAMED,
            "lib/utils.py",
            {1: "def clamp(x, lo, hi):", 2: "    return min(hi, max(lo, x))", 3: ""},
            id="renamed-under-new-name",
        ),
        pytest.param(NO_NEWLINE, "VERSION", {1: "project", 2: "1.1.0"}, id="no-newline-at-eof"),
        pytest.param(
            CRLF_CONTENT,
            "scripts/build.bat",
            {1: "@echo off", 2: "echo building release", 3: "exit /b 0"},
            id="crlf-content",
        ),
        pytest.param(ZERO_CONTEXT, "src/log.py", {3: '    level = "INFO"'}, id="zero-context"),
        pytest.param(DELETED, "src/legacy.py", {}, id="deleted"),
        pytest.param(BINARY, "assets/logo.png", {}, id="binary"),
        pytest.param(PURE_RENAME, "notes/b.txt", {}, id="pure-rename"),
    ],
)
def test_right_side_lines_are_context_and_added_lines(
    text: str, path: str, expected: dict[int, str]
) -> None:
    diff = Diff.parse(text)

    assert right_side_of(diff, path) == expected
    diff_file = diff.file(path)
    assert diff_file is not None
    assert diff_file.right_lines() == frozenset(expected)


def test_removed_lines_are_not_right_side_lines() -> None:
    texts = set(right_side_of(Diff.parse(MODIFIED), "src/calc.py").values())

    assert not texts & {"    s = 0", "    for x in xs:", "        s += x", "    return s"}


def test_right_side_text_has_no_line_ending() -> None:
    for text in (WHOLE, CRLF_CONTENT):
        diff = Diff.parse(text)
        for diff_file in diff.files:
            for line in right_side(diff_file).values():
                assert not line.endswith(("\n", "\r"))


@pytest.mark.parametrize(
    ("path", "deleted", "binary"),
    [
        ("src/calc.py", False, False),
        ("docs/usage.md", False, False),
        ("src/legacy.py", True, False),
        ("assets/logo.png", False, True),
        ("lib/utils.py", False, False),
    ],
)
def test_file_kind(path: str, deleted: bool, binary: bool) -> None:
    diff_file = Diff.parse(WHOLE).file(path)

    assert diff_file is not None
    assert (diff_file.deleted, diff_file.binary) == (deleted, binary)


def test_renamed_file_is_not_known_under_its_old_name() -> None:
    diff = Diff.parse(RENAMED)

    assert diff.file("lib/helpers.py") is None
    assert diff.hunk_covering("lib/helpers.py", 1, 1) is None


def test_hunk_carries_its_header_numbers() -> None:
    diff_file = Diff.parse(MODIFIED).file("src/calc.py")

    assert diff_file is not None
    assert [(h.target_start, h.target_length) for h in diff_file.hunks] == [(1, 6), (21, 4)]
    assert all(h.path == "src/calc.py" for h in diff_file.hunks)
    assert diff_file.hunks[1].text.startswith("@@ -20,7 +21,4 @@")


def test_file_header_is_the_text_before_the_first_hunk() -> None:
    diff_file = Diff.parse(MODIFIED).file("src/calc.py")

    assert diff_file is not None
    assert diff_file.header == (
        "diff --git a/src/calc.py b/src/calc.py\n"
        "index 3b18e51..a9c4f2d 100644\n"
        "--- a/src/calc.py\n"
        "+++ b/src/calc.py\n"
    )


def test_file_lookup_of_unknown_path() -> None:
    assert Diff.parse(MODIFIED).file("src/nope.py") is None


def test_diff_saved_with_crlf_line_endings_keeps_the_real_path() -> None:
    """A diff whose every line ends in CRLF (a Windows editor, a browser form) must either
    parse with the true path or be refused; it must not invent a path ending in CR."""
    text = CRLF_CONTENT.replace("\r\n", "\n").replace("\n", "\r\n")
    try:
        diff = Diff.parse(text)
    except DiffError:
        return
    assert diff.paths == ("scripts/build.bat",)
    assert diff.hunk_covering("scripts/build.bat", 2, 2) is not None


# --- malformed input ---------------------------------------------------------------------

SHORT_HUNK = """\
diff --git a/src/calc.py b/src/calc.py
index 3b18e51..a9c4f2d 100644
--- a/src/calc.py
+++ b/src/calc.py
@@ -1,5 +1,6 @@
 import math
+import logging
\x20
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "empty or not a unified diff", id="empty"),
        pytest.param("\n\n", "empty or not a unified diff", id="blank-lines"),
        pytest.param(
            "This pull request fixes the rounding bug in total().\n\nThanks!\n",
            "empty or not a unified diff",
            id="prose",
        ),
        pytest.param(SHORT_HUNK, "malformed diff: Hunk is shorter than expected", id="short-hunk"),
        pytest.param(
            MODIFIED.removesuffix(" \n") + ADDED,
            "malformed diff: Hunk diff line expected: diff --git a/docs/usage.md",
            id="short-hunk-before-next-file",
        ),
        pytest.param("@@ -1 +1 @@\n-a\n+b\n", "malformed diff", id="hunk-without-file"),
    ],
)
def test_malformed_input_raises_diff_error(text: str, message: str) -> None:
    with pytest.raises(DiffError, match=message):
        Diff.parse(text)


def test_diff_error_is_a_tiebreak_error() -> None:
    with pytest.raises(TiebreakError):
        Diff.parse("not a diff")


# --- hunk_covering -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "start", "end", "expected_start"),
    [
        pytest.param(MODIFIED, "src/calc.py", 2, 2, 1, id="added-line"),
        pytest.param(MODIFIED, "src/calc.py", 1, 6, 1, id="whole-first-hunk"),
        pytest.param(MODIFIED, "src/calc.py", 21, 24, 21, id="whole-second-hunk"),
        pytest.param(MODIFIED, "src/calc.py", 22, 22, 21, id="line-replacing-removed-ones"),
        pytest.param(MODIFIED, "src/calc.py", 5, 22, None, id="spans-two-hunks"),
        pytest.param(MODIFIED, "src/calc.py", 6, 7, None, id="runs-past-hunk-end"),
        pytest.param(MODIFIED, "src/calc.py", 10, 10, None, id="between-hunks"),
        pytest.param(MODIFIED, "src/calc.py", 24, 25, None, id="past-last-hunk"),
        pytest.param(MODIFIED, "src/other.py", 1, 1, None, id="unknown-path"),
        pytest.param(ZERO_CONTEXT, "src/log.py", 3, 3, 3, id="zero-context-change"),
        pytest.param(ZERO_CONTEXT, "src/log.py", 9, 9, None, id="removed-only-region"),
        pytest.param(ZERO_CONTEXT, "src/log.py", 3, 9, None, id="into-removed-only-region"),
        pytest.param(DELETED, "src/legacy.py", 1, 1, None, id="deleted-file"),
        pytest.param(BINARY, "assets/logo.png", 1, 1, None, id="binary-file"),
    ],
)
def test_hunk_covering(
    text: str, path: str, start: int, end: int, expected_start: int | None
) -> None:
    hunk = Diff.parse(text).hunk_covering(path, start, end)

    if expected_start is None:
        assert hunk is None
    else:
        assert hunk is not None
        assert (hunk.path, hunk.target_start) == (path, expected_start)


def test_hunk_covers_only_its_own_lines() -> None:
    hunk = Hunk(path="a.py", target_start=3, target_length=2, lines={3: "x", 4: "y"}, text="")

    assert hunk.covers(3, 4)
    assert hunk.covers(4, 4)
    assert not hunk.covers(2, 3)
    assert not hunk.covers(4, 5)


# --- review units ------------------------------------------------------------------------


def file_diff(path: str, hunk_lines: list[list[str]], *, gap: int = 20) -> str:
    """A modified file: each hunk replaces one line and shows the given added lines."""
    text = (
        f"diff --git a/{path} b/{path}\nindex 0123456..789abcd 100644\n--- a/{path}\n+++ b/{path}\n"
    )
    source = target = 1
    for lines in hunk_lines:
        text += f"@@ -{source},1 +{target},{len(lines)} @@\n-old line {source}\n"
        text += "".join(f"+{line}\n" for line in lines)
        source += gap
        target += gap + len(lines) - 1
    return text


def many_files(count: int, lines_each: int = 4) -> str:
    return "".join(
        file_diff(
            f"pkg/module_{i:02d}.py",
            [[f"    value_{i}_{j} = compute({i}, {j})" for j in range(lines_each)]],
        )
        for i in range(count)
    )


def one_big_file(hunks: int, lines_each: int = 3) -> str:
    return file_diff(
        "src/big.py",
        [
            [f"    result_{h}_{j} = transform(data[{h}], {j})" for j in range(lines_each)]
            for h in range(hunks)
        ],
    )


def assert_units_cover(diff: Diff, max_tokens: int) -> None:
    units = diff.units(max_tokens)
    reviewable = [f for f in diff.files if not f.deleted and not f.binary and f.hunks]

    assert [u.id for u in units] == [f"u{i}" for i in range(1, len(units) + 1)]
    unit_hunks = [key for u in units for key in hunk_keys(u.diff)]
    assert sorted(unit_hunks) == sorted(hunk_keys(Diff(tuple(reviewable))))
    for unit in units:
        tokens = typical_tokens(unit.diff.text)
        single_hunk = len(unit.diff.files) == 1 and len(unit.diff.files[0].hunks) == 1
        assert tokens <= max_tokens or single_hunk, (unit.id, tokens, max_tokens)


def test_small_diff_is_one_unit_of_all_reviewable_files() -> None:
    units = Diff.parse(WHOLE).units()

    assert [u.id for u in units] == ["u1"]
    assert units[0].diff.paths == ("src/calc.py", "docs/usage.md", "lib/utils.py", "VERSION")


@pytest.mark.parametrize("text", [DELETED, BINARY, PURE_RENAME, DELETED + BINARY])
def test_files_with_nothing_on_the_right_side_get_no_unit(text: str) -> None:
    assert Diff.parse(text).units() == []


def test_many_files_split_into_several_units_in_file_order() -> None:
    diff = Diff.parse(many_files(12))
    max_tokens = 150
    assert all(typical_tokens(f.text) <= max_tokens for f in diff.files)

    units = diff.units(max_tokens)

    assert len(units) > 1
    assert [u.id for u in units] == [f"u{i}" for i in range(1, len(units) + 1)]
    assert [p for u in units for p in u.diff.paths] == list(diff.paths)
    for unit in units:
        assert typical_tokens(unit.diff.text) <= max_tokens
        assert all(unit.diff.file(p) == diff.file(p) for p in unit.diff.paths)
    assert_units_cover(diff, max_tokens)


def test_units_take_the_riskiest_files_first() -> None:
    """A ceiling too small for the whole diff is spent on what matters most: code before its
    tests, docs and lock files, sensitive code before the rest, larger changes first."""
    lines = [[f"    entry_{j} = build({j})" for j in range(3)]]
    diff = Diff.parse(
        file_diff("uv.lock", lines * 9)
        + file_diff("README.md", lines * 6)
        + file_diff("tests/test_cart.py", lines * 6)
        + file_diff("shop/cart.py", lines)
        + file_diff("shop/orders.py", lines * 4)
        + file_diff("shop/payments.py", lines)
    )
    smallest = min(typical_tokens(f.text) for f in diff.files)

    units = diff.units(smallest)

    in_order = list(dict.fromkeys(p for u in units for p in u.diff.paths))
    assert in_order == [
        "shop/payments.py",
        "shop/orders.py",
        "shop/cart.py",
        "tests/test_cart.py",
        "README.md",
        "uv.lock",
    ]
    assert [u.id for u in units] == [f"u{i}" for i in range(1, len(units) + 1)]


@pytest.mark.parametrize("max_tokens", [60, 90, 120, 200])
def test_big_file_is_split_at_hunk_boundaries(max_tokens: int) -> None:
    diff = Diff.parse(one_big_file(10))
    (whole,) = diff.files
    assert typical_tokens(whole.text) > max_tokens

    units = diff.units(max_tokens)

    assert len(units) > 1
    for unit in units:
        for piece in unit.diff.files:
            assert piece.path == "src/big.py"
            assert piece.header == whole.header
            assert piece.text.startswith(whole.header)
            assert piece.hunks
    pieces_hunks = [h.text for u in units for f in u.diff.files for h in f.hunks]
    assert pieces_hunks == [h.text for h in whole.hunks]
    assert_units_cover(diff, max_tokens)


def test_hunk_bigger_than_the_limit_stays_whole() -> None:
    diff = Diff.parse(one_big_file(3, lines_each=40))
    (whole,) = diff.files

    units = diff.units(50)

    assert [len(u.diff.files[0].hunks) for u in units] == [1, 1, 1]
    assert [u.diff.files[0].hunks[0].text for u in units] == [h.text for h in whole.hunks]


def test_default_limit_keeps_a_large_pull_request_in_few_units() -> None:
    diff = Diff.parse(many_files(60, lines_each=10))

    units = diff.units()

    assert len(units) < len(diff.files)
    assert_units_cover(diff, 12_000)


@pytest.mark.parametrize(
    ("text", "max_tokens"),
    [
        pytest.param(WHOLE, 12_000, id="mixed-one-unit"),
        pytest.param(WHOLE, 40, id="mixed-small-units"),
        pytest.param(CRLF_CONTENT + NO_NEWLINE, 30, id="crlf-and-no-newline"),
        pytest.param(many_files(8), 100, id="many-files"),
        pytest.param(one_big_file(9), 70, id="split-file"),
    ],
)
def test_unit_text_parses_back_to_the_same_right_side(text: str, max_tokens: int) -> None:
    for unit in Diff.parse(text).units(max_tokens):
        reparsed = Diff.parse(unit.diff.text)

        assert reparsed.paths == unit.diff.paths
        assert [right_side(f) for f in reparsed.files] == [right_side(f) for f in unit.diff.files]


def generated_model(fields: int) -> str:
    """A long generated file where every field changed: one small hunk per field."""
    text = (
        "diff --git a/src/generated/api.py b/src/generated/api.py\n"
        "index 0123456..789abcd 100644\n"
        "--- a/src/generated/api.py\n"
        "+++ b/src/generated/api.py\n"
    )
    for i in range(fields):
        name = f"field_{i}" + "_x" * (i % 3)
        start = 1 + 40 * i
        text += (
            f"@@ -{start},3 +{start},3 @@ class Model:\n"
            f"     # {name}\n"
            f"-    {name}: int = 0\n"
            f"+    {name}: int | None = None\n"
            "     \n"
        )
    return text


def assert_hunks_addressable(diff: Diff, max_tokens: int) -> None:
    for unit in diff.units(max_tokens):
        for piece in unit.diff.files:
            for hunk in piece.hunks:
                line = min(hunk.lines)
                assert unit.diff.hunk_covering(piece.path, line, line) == hunk, (
                    f"max_tokens={max_tokens}: line {line} of {piece.path} is in {unit.id} "
                    f"but the unit cannot find its hunk ({unit.id} holds "
                    f"{len(unit.diff.files)} pieces: {unit.diff.paths})"
                )
        assert len(set(unit.diff.paths)) == len(unit.diff.files)


def test_pieces_of_a_split_file_never_share_a_unit() -> None:
    """Pieces of one split file must not share a unit: the unit's Diff indexes files by path,
    so the second piece hides the first and none of its lines can take a finding or patch."""
    diff = Diff.parse(file_diff("src/big.py", [["x" * 10] for _ in range(120)]))

    for max_tokens in range(20, 1300):
        assert_hunks_addressable(diff, max_tokens)


def test_pieces_of_a_split_file_never_share_a_unit_at_the_default_limit() -> None:
    diff = Diff.parse(generated_model(771))

    assert_hunks_addressable(diff, DEFAULT_UNIT_TOKENS)


# --- property: units partition the reviewable diff ---------------------------------------

LINE_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")),
    max_size=50,
)


@st.composite
def modified_file(draw: st.DrawFn, path: str) -> str:
    text = f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n"
    text += f"--- a/{path}\n+++ b/{path}\n"
    source = draw(st.integers(1, 30))
    offset = 0
    for _ in range(draw(st.integers(1, 8))):
        before = draw(st.lists(LINE_TEXT, max_size=3))
        removed = draw(st.lists(LINE_TEXT, max_size=3))
        added = draw(st.lists(LINE_TEXT, min_size=0 if removed else 1, max_size=4))
        after = draw(st.lists(LINE_TEXT, max_size=3))
        source_length = len(before) + len(removed) + len(after)
        target_length = len(before) + len(added) + len(after)
        text += f"@@ -{source},{source_length} +{source + offset},{target_length} @@\n"
        text += "".join(f" {line}\n" for line in before)
        text += "".join(f"-{line}\n" for line in removed)
        text += "".join(f"+{line}\n" for line in added)
        text += "".join(f" {line}\n" for line in after)
        source += source_length + draw(st.integers(1, 20))
        offset += len(added) - len(removed)
    return text


@st.composite
def added_file(draw: st.DrawFn, path: str) -> str:
    lines = draw(st.lists(LINE_TEXT, min_size=1, max_size=12))
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..3333333\n"
        f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n"
        + "".join(f"+{line}\n" for line in lines)
    )


@st.composite
def deleted_file(draw: st.DrawFn, path: str) -> str:
    lines = draw(st.lists(LINE_TEXT, min_size=1, max_size=6))
    return (
        f"diff --git a/{path} b/{path}\ndeleted file mode 100644\nindex 4444444..0000000\n"
        f"--- a/{path}\n+++ /dev/null\n@@ -1,{len(lines)} +0,0 @@\n"
        + "".join(f"-{line}\n" for line in lines)
    )


def binary_file(path: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\nindex 5555555..6666666 100644\n"
        f"Binary files a/{path} and b/{path} differ\n"
    )


@st.composite
def multi_file_diffs(draw: st.DrawFn) -> str:
    kinds = draw(
        st.lists(
            st.sampled_from(["modified", "modified", "modified", "added", "deleted", "binary"]),
            min_size=1,
            max_size=7,
        )
    )
    text = ""
    for i, kind in enumerate(kinds):
        path = f"dir{i % 3}/file_{i}.py"
        if kind == "modified":
            text += draw(modified_file(path))
        elif kind == "added":
            text += draw(added_file(path))
        elif kind == "deleted":
            text += draw(deleted_file(path))
        else:
            text += binary_file(path.replace(".py", ".png"))
    return text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=multi_file_diffs(), max_tokens=st.integers(5, 400))
def test_units_partition_the_reviewable_right_side(text: str, max_tokens: int) -> None:
    diff = Diff.parse(text)
    reviewable = [f for f in diff.files if not f.deleted and not f.binary]

    units = diff.units(max_tokens)

    whole_right = {(f.path, n, t) for f in reviewable for n, t in right_side(f).items()}
    unit_right = [
        (f.path, n, t) for u in units for f in u.diff.files for n, t in right_side(f).items()
    ]
    assert set(unit_right) == whole_right
    assert len(unit_right) == len(whole_right)

    unit_hunks = [key for u in units for key in hunk_keys(u.diff)]
    assert len(unit_hunks) == len(set(unit_hunks))
    assert sorted(unit_hunks) == sorted(hunk_keys(Diff(tuple(reviewable))))

    skipped = {f.path for f in diff.files if f.deleted or f.binary}
    assert not skipped & {p for u in units for p in u.diff.paths}

    assert_units_cover(diff, max_tokens)
    for unit in units:
        reparsed = Diff.parse(unit.diff.text)
        assert [right_side(f) for f in reparsed.files] == [right_side(f) for f in unit.diff.files]


def test_units_of_part_of_a_pull_request_know_the_rest_of_its_changes() -> None:
    whole = Diff.parse(many_files(3, lines_each=4))
    part = Diff(whole.files[:1])

    (unit,) = part.units(changes=whole.changes())

    assert unit.pull_changes == whole.changes()
    assert unit.elsewhere.splitlines() == [f"{f.path} (lines 1-4)" for f in whole.files[1:]]
    (alone,) = part.units()
    assert alone.pull_changes == part.changes()
    assert alone.elsewhere == ""


AWKWARD_TEXT = st.text(
    alphabet=st.sampled_from(
        ["a", "é", " ", "+", "-", "\\", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\r"]
    ),
    max_size=10,
)
"""Line text with the characters `str.splitlines` breaks at, which a diff's lines keep."""


@st.composite
def awkward_file(draw: st.DrawFn) -> str:
    """A modified file whose lines hold line-breaking characters, some lines empty (as an
    editor that trims trailing spaces leaves them), maybe without a newline at its end."""
    text = "diff --git a/page.c b/page.c\n--- a/page.c\n+++ b/page.c\n"
    start = 1
    for _ in range(draw(st.integers(1, 3))):
        kinds = draw(st.lists(st.sampled_from([" ", "-", "+", ""]), min_size=1, max_size=8))
        body = [kind + draw(AWKWARD_TEXT) if kind else "" for kind in kinds]
        source = sum(kind in (" ", "-", "") for kind in kinds)
        target = sum(kind in (" ", "+", "") for kind in kinds)
        text += f"@@ -{start},{source} +{start},{target} @@\n" + "".join(f"{b}\n" for b in body)
        start += max(source, target) + draw(st.integers(1, 5))
    if draw(st.booleans()):
        text += "\\ No newline at end of file\n"
    return text


@settings(max_examples=300, deadline=None)
@given(text=awkward_file())
def test_a_file_rebuilt_from_its_hunks_is_the_file_parsed(text: str) -> None:
    (parsed,) = Diff.parse(text).files
    (patched,) = PatchSet(text)

    rebuilt = DiffFile.rebuilt(
        parsed.path, parsed.header, [h.text for h in parsed.hunks], parsed.deleted, parsed.binary
    )

    assert rebuilt == parsed
    # What the hunks add, as unidiff numbers it: a line keeps the characters it breaks at.
    assert [h.added() for h in parsed.hunks] == [
        [line.target_line_no for line in hunk if line.is_added] for hunk in patched
    ]
    assert parsed.added_lines() == [
        line.value.rstrip("\r\n") for hunk in patched for line in hunk if line.is_added
    ]


def test_a_hunk_without_its_at_line_is_refused() -> None:
    with pytest.raises(DiffError, match="no @@ line"):
        Hunk.rebuilt("a.py", "+x = 1\n")
