"""A finding's inline comment always fits GitHub's limit on a comment's body, 65,535
characters, so that one long finding never costs the run its review, summary, label and check
run: its test's output, its test and its prose are cut first, each cut marked, and a
suggestion is kept whole or left out, never cut."""

from agents.outcome import Consensus, FindingOutcome, IntendedBy, MessageKind, Resolution
from agents.protocol import Citation, Reproduction
from agents.verification import Run, Verification
from tests.kits.plan import (
    ADDED,
    BIG,
    draft,
    publish,
    raw_html_tags,
    read_fences,
    result,
    says,
    the_comment,
    unit,
)

GITHUB_LIMIT = 65_535
TEST = "tests/test_big.py"
TRANSCRIPT = "[The transcript](https://tiebreak.example/runs/run-42) has the whole debate."


def patch_of(size: int) -> str:
    """A replacement of about `size` characters, in whole lines."""
    lines = [f"value_{n:05d} = compute({n})  # {'x' * 40}\n" for n in range(size // 69 + 1)]
    return "".join(lines)[:size].rsplit("\n", 1)[0] + "\n"


def long_test(size: int) -> str:
    """A test file of about `size` characters."""
    lines = [f"    assert total([{n}]) == {n}  # {'y' * 60}\n" for n in range(size // 80 + 1)]
    return "def test_total():\n" + "".join(lines)[:size].rsplit("\n", 1)[0] + "\n"


def proven_by(found: FindingOutcome, content: str) -> FindingOutcome:
    """`found`, proven by a test of `content` that fails at the head with 30 lines of output,
    its fix verified."""
    failing = Run(
        exit_code=1, output_tail="\n".join(f"E   line {n} " + "z" * 150 for n in range(30))
    )
    verification = Verification.of(TEST, "pytest {test}", failing, Run(exit_code=0))
    finding = found.finding.model_copy(
        update={"reproduction": Reproduction(path=TEST, content=content)}
    )
    return found.model_copy(
        update={"finding": finding, "verification": verification, "fix_verified": True}
    )


def test_a_long_fix_with_a_long_test_keeps_its_suggestion_whole_and_cuts_the_test() -> None:
    patch, test = patch_of(38_880), long_test(22_880)
    found = proven_by(result("F1", BIG, 5, replacement=patch, evidence="e" * 3_500), test)

    publication = publish(unit(found))

    comment = the_comment(publication)
    every_body = [publication.summary, publication.check.summary, publication.check.text]
    every_body += [draft(publication).body, comment.body]
    assert all(len(body) <= GITHUB_LIMIT for body in every_body)
    blocks, _, unclosed = read_fences(comment.body)
    assert not unclosed
    (suggestion,) = [b for b in blocks if b.info == "suggestion"]
    assert suggestion.lines == patch.removesuffix("\n").split("\n")
    shown_test, output = blocks[0], blocks[1]
    assert shown_test.info == "python"
    *shown, marker = shown_test.lines
    assert 0 < len(shown) < len(test.splitlines())  # the test was cut next, at a line
    assert shown == test.splitlines()[: len(shown)]
    assert marker == f"… {len(test.splitlines()) - len(shown)} more lines"
    assert output.lines == ["… 20 lines cut"]  # the output was cut first, to nothing
    assert "e" * 3_500 in comment.body  # the prose was not cut at all
    assert f"“…” marks each cut. {TRANSCRIPT}_" in comment.body
    assert comment.body.endswith(" -->")  # the fingerprint still closes it


def test_a_suggestion_too_long_to_fit_is_left_out_saying_why() -> None:
    # A run of backticks in the patch lengthens both of the suggestion's fences to outrun it.
    patch = "`" * 30_000 + "\n" + "x" * 9_000 + "\n"
    found = proven_by(result("F1", BIG, 5, replacement=patch), long_test(2_000))

    comment = the_comment(publish(unit(found)))

    assert len(comment.body) <= GITHUB_LIMIT
    blocks, _, unclosed = read_fences(comment.body)
    assert not unclosed
    assert [b.info for b in blocks] == ["python", ""]  # the test and its output; no suggestion
    assert "```suggestion" not in comment.body
    assert (
        "**Fix not shown**: the suggested fix for <code>src/big.py:5</code> (39,002 characters) "
        "does not fit in this comment, which GitHub limits to 65,535 characters, and a "
        "suggestion cut short would commit a broken file. Comment `/tiebreak apply` to commit "
        "it with the review's other fixes." in comment.body
    )
    assert "**Fix verified**: the finding's test passes with this patch." in comment.body
    assert "Shortened to fit" not in comment.body  # all the rest is shown whole
    assert blocks[1].lines[-1] == "E   line 29 " + "z" * 150


def test_text_that_escaping_lengthens_many_times_still_fits() -> None:
    escaped = "`" + "_<[|" * 1_999 + "`"  # each character inside becomes 5 or 6 in `<code>`
    patch = patch_of(40_000)
    fixed = result(
        "F1",
        BIG,
        5,
        consensus=Consensus.ARBITER,
        replacement=patch,
        claim=escaped[:1_999] + "`",
        evidence=escaped,
    )
    thread = [says("F1", MessageKind.RULING, escaped)]

    comment = the_comment(publish(unit(fixed, messages=thread)))

    assert len(comment.body) <= GITHUB_LIMIT
    blocks, _, unclosed = read_fences(comment.body)
    assert not unclosed
    (suggestion,) = [b for b in blocks if b.info == "suggestion"]
    assert suggestion.lines == patch.removesuffix("\n").split("\n")
    assert "<code>&#95;&#60;&#91;&#124;&#95;" in comment.body  # the claim, still code
    for label in ("**Evidence**", "**The arbiter's reasoning**"):
        shown = comment.body.split(f"{label}\n")[1].split("\n\n")[0]
        assert shown.endswith("…")
    assert f"“…” marks each cut. {TRANSCRIPT}_" in comment.body
    assert raw_html_tags(comment.body) == []


def test_what_still_does_not_fit_is_cut_after_its_last_whole_block() -> None:
    # A behaviour change citing many long paths, each character of which escaping lengthens.
    paths = [Citation(path=f"{n}" + "_" * 990, start_line=1, end_line=1) for n in range(20)]
    intended = result(
        "F1", ADDED, 1, resolution=Resolution.INTENDED, intended=IntendedBy(citations=paths)
    )

    comment = the_comment(publish(unit(intended)))

    assert len(comment.body) <= GITHUB_LIMIT
    assert "_Truncated: " in comment.body
    assert "characters were cut to fit GitHub's limit of 65,535 characters." in comment.body
    assert "<sub>Tiebreak · F1" in comment.body
    assert comment.body.endswith(" -->")
    assert not read_fences(comment.body)[2]
