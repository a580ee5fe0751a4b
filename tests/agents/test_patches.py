"""Whether a patch or a finding may stand on a diff, how many lines a patch changes, and a
file's text with patches applied."""

import pytest
from pydantic import ValidationError

from agents.diff import Diff
from agents.patches import (
    PatchError,
    PatchesOverlap,
    StaleLines,
    apply_patches,
    changed_lines,
    current_lines,
    finding_problem,
    patch_problem,
)
from agents.protocol import Finding, Patch, Severity
from policies.safety import ProtectedPaths

DIFF = Diff.parse(
    """\
diff --git a/src/cart.py b/src/cart.py
index 3b18e51..a9c4f2d 100644
--- a/src/cart.py
+++ b/src/cart.py
@@ -1,5 +1,6 @@
 from decimal import Decimal
+import logging
\x20
\x20
 def subtotal(items):
     return sum(i.price for i in items)
@@ -30,5 +31,6 @@ def subtotal(items):
 def total(items, tax):
-    value = subtotal(items) * tax
+    value = subtotal(items) * (1 + tax)
+    logging.debug("total %s", value)
     return round(value, 2)
\x20
\x20
@@ -50,3 +52,2 @@ def total(items, tax):
 def discount(value):
-    # TODO
-    pass
+    return value
diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml
index 1111111..2222222 100644
--- a/.github/workflows/ci.yml
+++ b/.github/workflows/ci.yml
@@ -1,3 +1,3 @@
 on: push
 jobs:
-  test: {runs-on: ubuntu-22.04}
+  test: {runs-on: ubuntu-latest}
diff --git a/src/old.py b/src/old.py
deleted file mode 100644
index 3333333..0000000
--- a/src/old.py
+++ /dev/null
@@ -1,2 +0,0 @@
-x = 1
-y = 2
diff --git a/assets/logo.png b/assets/logo.png
index 4444444..5555555 100644
Binary files a/assets/logo.png and b/assets/logo.png differ
"""
)

PROTECTED = ProtectedPaths([".github/workflows/**"])
UNPROTECTED = ProtectedPaths([])


def patch(path: str, start: int, end: int, replacement: str) -> Patch:
    return Patch(path=path, start_line=start, end_line=end, replacement=replacement)


def finding(path: str, start: int, end: int) -> Finding:
    return Finding(
        path=path,
        start_line=start,
        end_line=end,
        id="f1",
        severity=Severity.MAJOR,
        claim="total() applies the tax rate as a multiplier, not as a surcharge",
    )


def test_current_lines_are_the_right_side_text_of_the_span() -> None:
    assert current_lines(DIFF, patch("src/cart.py", 32, 34, "")) == [
        "    value = subtotal(items) * (1 + tax)",
        '    logging.debug("total %s", value)',
        "    return round(value, 2)",
    ]


def test_current_lines_of_an_invalid_span_are_empty() -> None:
    assert current_lines(DIFF, patch("src/cart.py", 6, 31, "")) == []
    assert current_lines(DIFF, patch("src/nope.py", 1, 1, "")) == []


# --- patch_problem -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "valid",
    [
        pytest.param(
            patch("src/cart.py", 32, 32, "    value = subtotal(items) * (tax + 1)"), id="one"
        ),
        pytest.param(patch("src/cart.py", 31, 34, "def total(items, tax):\n    pass\n"), id="span"),
        pytest.param(patch("src/cart.py", 2, 2, ""), id="delete-added-line"),
        pytest.param(
            patch("src/cart.py", 1, 1, "from decimal import Decimal\nimport math"), id="ins"
        ),
        pytest.param(patch("src/cart.py", 53, 53, "    return max(value, 0)"), id="last-hunk"),
        pytest.param(patch(".github/workflows/ci.yml", 3, 3, "  test: {}"), id="ci-unprotected"),
    ],
)
def test_valid_patch_has_no_problem(valid: Patch) -> None:
    assert patch_problem(valid, DIFF, UNPROTECTED) is None


@pytest.mark.parametrize(
    ("invalid", "message"),
    [
        pytest.param(
            patch("src/payment.py", 1, 1, "x = 1"),
            "patch refused: src/payment.py is not part of this diff",
            id="path-not-in-diff",
        ),
        pytest.param(
            patch("src/cart.py", 10, 10, "x = 1"),
            "patch refused: src/cart.py:10-10 is not within one hunk",
            id="between-hunks",
        ),
        pytest.param(
            patch("src/cart.py", 6, 7, "x = 1"),
            "patch refused: src/cart.py:6-7 is not within one hunk",
            id="runs-past-hunk",
        ),
        pytest.param(
            patch("src/cart.py", 36, 37, "x = 1"),
            "patch refused: src/cart.py:36-37 is not within one hunk",
            id="past-hunk-end",
        ),
        pytest.param(
            patch("src/cart.py", 5, 32, "x = 1"),
            "patch refused: src/cart.py:5-32 is not within one hunk",
            id="spans-two-hunks",
        ),
        pytest.param(
            patch("src/cart.py", 1000, 1000, "x = 1"),
            "is not within one hunk",
            id="past-end-of-file",
        ),
        pytest.param(
            patch("src/old.py", 1, 1, "x = 2"),
            "patch refused: src/old.py:1-1 is not within one hunk",
            id="deleted-file",
        ),
        pytest.param(
            patch("assets/logo.png", 1, 1, "x"),
            "patch refused: assets/logo.png:1-1 is not within one hunk",
            id="binary-file",
        ),
        pytest.param(
            patch(".github/workflows/ci.yml", 3, 3, "  test: {}"),
            "patch refused: .github/workflows/ci.yml is a protected path",
            id="protected",
        ),
        pytest.param(
            patch("../x", 1, 1, "x"),
            "patch refused: '../x' is not a plain path inside the repository",
            id="traversal",
        ),
        pytest.param(
            patch("src/../../etc/passwd", 1, 1, "x"),
            "is not a plain path inside the repository",
            id="traversal-inside",
        ),
        pytest.param(
            patch("/etc/passwd", 1, 1, "x"),
            "is not a plain path inside the repository",
            id="absolute",
        ),
        pytest.param(
            patch("src/cart.py", 32, 32, "    value = subtotal(items) * (1 + tax)"),
            "patch refused: it does not change src/cart.py:32",
            id="no-op",
        ),
        pytest.param(
            patch("src/cart.py", 32, 32, "    value = subtotal(items) * (1 + tax)\n"),
            "patch refused: it does not change src/cart.py:32",
            id="no-op-trailing-newline",
        ),
        pytest.param(
            patch(
                "src/cart.py",
                31,
                33,
                "def total(items, tax):\n"
                "    value = subtotal(items) * (1 + tax)\n"
                '    logging.debug("total %s", value)\n',
            ),
            "patch refused: it does not change src/cart.py:31",
            id="no-op-span",
        ),
    ],
)
def test_invalid_patch_is_refused(invalid: Patch, message: str) -> None:
    problem = patch_problem(invalid, DIFF, PROTECTED)

    assert problem is not None
    assert message in problem


def test_protection_applies_only_to_matching_paths() -> None:
    ok = patch("src/cart.py", 32, 32, "    value = subtotal(items) * (tax + 1)")

    assert patch_problem(ok, DIFF, PROTECTED) is None


def test_no_op_patch_on_crlf_file_is_refused() -> None:
    diff = Diff.parse(
        "diff --git a/build.bat b/build.bat\n"
        "index 1111111..2222222 100644\n"
        "--- a/build.bat\n"
        "+++ b/build.bat\n"
        "@@ -1,2 +1,2 @@\n"
        " @echo off\r\n"
        "-echo old\r\n"
        "+echo new\r\n"
    )

    for replacement in ("echo new", "echo new\r\n", "echo new\n"):
        problem = patch_problem(patch("build.bat", 2, 2, replacement), diff, UNPROTECTED)
        assert problem == "patch refused: it does not change build.bat:2"


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("\x0c", id="form-feed-page-break"),
        pytest.param("x = 1  \x0b# vertical tab", id="vertical-tab"),
        pytest.param("SEP = '\u2028'", id="unicode-line-separator"),
    ],
)
def test_no_op_patch_on_a_line_with_a_unicode_line_boundary_is_refused(line: str) -> None:
    """Git splits lines at LF only; a line holding a form feed (an Emacs page break) or U+2028
    is one line, and a patch that restates it changes nothing."""
    diff = Diff.parse(
        "diff --git a/src/mod.py b/src/mod.py\n"
        "index 1111111..2222222 100644\n"
        "--- a/src/mod.py\n"
        "+++ b/src/mod.py\n"
        "@@ -1,3 +1,3 @@\n"
        " import os\n"
        "-old = 1\n"
        f"+{line}\n"
        " VALUE = 2\n"
    )
    no_op = patch("src/mod.py", 2, 2, line)
    assert current_lines(diff, no_op) == [line]

    assert (patch_problem(no_op, diff, UNPROTECTED), changed_lines(no_op, diff)) == (
        "patch refused: it does not change src/mod.py:2",
        0,
    )


@pytest.mark.parametrize(
    ("start", "end"),
    [(5, 4), (2, 1), (100, 99)],
)
def test_patch_with_start_after_end_is_invalid(start: int, end: int) -> None:
    with pytest.raises(ValidationError, match="start_line must not be after end_line"):
        patch("src/cart.py", start, end, "x")


@pytest.mark.parametrize(
    ("path", "start", "end"),
    [("src/cart.py", 0, 1), ("src/cart.py", -1, 2), ("", 1, 1)],
)
def test_patch_with_impossible_span_is_invalid(path: str, start: int, end: int) -> None:
    with pytest.raises(ValidationError):
        patch(path, start, end, "x")


# --- finding_problem ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "start", "end"),
    [
        pytest.param("src/cart.py", 32, 32, id="added-line"),
        pytest.param("src/cart.py", 31, 36, id="whole-hunk"),
        pytest.param("src/cart.py", 4, 4, id="context-line"),
        pytest.param(".github/workflows/ci.yml", 3, 3, id="protected-path-may-be-criticised"),
    ],
)
def test_valid_finding_has_no_problem(path: str, start: int, end: int) -> None:
    assert finding_problem(finding(path, start, end), DIFF) is None


@pytest.mark.parametrize(
    ("path", "start", "end", "message"),
    [
        pytest.param(
            "src/payment.py",
            1,
            1,
            "finding refused: src/payment.py is not part of this diff",
            id="path-not-in-diff",
        ),
        pytest.param(
            "src/cart.py",
            10,
            12,
            "finding refused: src/cart.py:10-12 is not within one hunk",
            id="between-hunks",
        ),
        pytest.param(
            "src/cart.py",
            6,
            31,
            "finding refused: src/cart.py:6-31 is not within one hunk",
            id="spans-two-hunks",
        ),
        pytest.param(
            "src/old.py",
            1,
            2,
            "finding refused: src/old.py:1-2 is not within one hunk",
            id="deleted-file",
        ),
        pytest.param(
            "assets/logo.png",
            1,
            1,
            "finding refused: assets/logo.png:1-1 is not within",
            id="binary-file",
        ),
    ],
)
def test_invalid_finding_is_refused(path: str, start: int, end: int, message: str) -> None:
    problem = finding_problem(finding(path, start, end), DIFF)

    assert problem is not None
    assert problem.startswith(message)


def test_finding_with_start_after_end_is_invalid() -> None:
    with pytest.raises(ValidationError, match="start_line must not be after end_line"):
        finding("src/cart.py", 33, 32)


# --- changed_lines -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "replacement", "expected"),
    [
        pytest.param(32, 32, "    value = subtotal(items) * (tax + 1)", 1, id="modify-one"),
        pytest.param(32, 34, "    return round(subtotal(items) * (1 + tax), 2)", 3, id="3-to-1"),
        pytest.param(
            34,
            34,
            "    return round(value, 2)\n    # rounded to cents\n    # see ADR-12",
            2,
            id="insert-2",
        ),
        pytest.param(32, 33, "", 2, id="delete-2"),
        pytest.param(31, 36, "", 6, id="delete-hunk"),
        pytest.param(
            32,
            34,
            "    value = subtotal(items) * (1 + tax)\n    return round(value, 2)",
            1,
            id="drop-middle-line",
        ),
        pytest.param(32, 32, "    value = subtotal(items) * (1 + tax)", 0, id="no-op"),
    ],
)
def test_changed_lines(start: int, end: int, replacement: str, expected: int) -> None:
    assert changed_lines(patch("src/cart.py", start, end, replacement), DIFF) == expected


NEW_FILE = Diff.parse(
    """\
diff --git a/a.py b/a.py
new file mode 100644
--- /dev/null
+++ b/a.py
@@ -0,0 +1,4 @@
+one
+two
+three
+four
"""
)
HEAD = "one\ntwo\nthree\nfour\n"


@pytest.mark.parametrize(
    ("text", "patches", "expected"),
    [
        (HEAD, [("a.py", 2, 2, "TWO")], "one\nTWO\nthree\nfour\n"),
        (HEAD, [("a.py", 3, 4, "3\n4\n5\n"), ("a.py", 1, 1, "")], "two\n3\n4\n5\n"),
        (
            HEAD.replace("\n", "\r\n"),
            [("a.py", 2, 2, "2\n2b")],
            "one\r\n2\r\n2b\r\nthree\r\nfour\r\n",
        ),
        (HEAD.removesuffix("\n"), [("a.py", 4, 4, "FOUR\n")], "one\ntwo\nthree\nFOUR"),
    ],
)
def test_apply_patches_replaces_the_lines_of_each_patch(
    text: str, patches: list[tuple[str, int, int, str]], expected: str
) -> None:
    assert apply_patches(text, [patch(*p) for p in patches], NEW_FILE) == expected


@pytest.mark.parametrize(
    ("text", "patches", "error"),
    [
        (HEAD, [("a.py", 1, 2, "x"), ("a.py", 2, 3, "y")], PatchesOverlap(0, 1)),
        (HEAD, [("a.py", 3, 3, "x"), ("a.py", 1, 3, "y")], PatchesOverlap(1, 0)),
        (HEAD.replace("two", "2"), [("a.py", 1, 1, "x"), ("a.py", 2, 2, "y")], StaleLines(1)),
        ("one\n", [("a.py", 3, 4, "x")], StaleLines(0)),
        (HEAD, [("b.py", 1, 1, "x")], StaleLines(0)),
    ],
)
def test_apply_patches_refuses_what_does_not_apply(
    text: str, patches: list[tuple[str, int, int, str]], error: PatchError
) -> None:
    with pytest.raises(type(error)) as raised:
        apply_patches(text, [patch(*p) for p in patches], NEW_FILE)
    assert vars(raised.value) == vars(error)
