"""A finding's test on the pull request: a reproduced finding posted with its proof, a fix
with its check, a withdrawn one with the test that withdrew it — and a hostile test or output
kept inside its code block."""

import pytest

from agents.outcome import Consensus, FindingOutcome, Resolution
from agents.protocol import Reproduction
from agents.verification import Evidence, Run, Verification
from tests.kits.plan import (
    BIG,
    draft,
    publish,
    raw_html_tags,
    read_fences,
    result,
    table_rows,
    the_comment,
    unit,
    visible_text,
)

TEST = "tests/test_big.py"
SHOWN = "<code>tests/test&#95;big.py</code>"
"""The test's path as the comment shows it, as inline code."""
CONTENT = "from src.big import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
FAILING = Run(exit_code=1, output_tail="E   assert 2 == 3\nFAILED tests/test_big.py::test_total")
PASSING = Run(exit_code=0, output_tail="1 passed")


def with_test(
    found: FindingOutcome,
    head: Run,
    base: Run | None,
    *,
    fix: bool | None = None,
    body: str = CONTENT,
) -> FindingOutcome:
    """`found`, with a test that ran as `head` and `base` say, and a fix check."""
    finding = found.finding.model_copy(
        update={"reproduction": Reproduction(path=TEST, content=body)}
    )
    verification = Verification.of(TEST, "python -m pytest -q {test}", head, base)
    return found.model_copy(
        update={"finding": finding, "verification": verification, "fix_verified": fix}
    )


def test_a_reproduced_finding_is_posted_with_its_test_its_failure_and_its_fix_check() -> None:
    proven = with_test(result("F1", BIG, 5), FAILING, PASSING, fix=True)

    publication = publish(unit(proven))

    body = the_comment(publication).body
    assert f"**Reproduced**: {SHOWN} fails at the head and passes at the base." in body
    blocks, _, unclosed = read_fences(body)
    assert not unclosed
    test, output, fix = blocks[0], blocks[1], blocks[2]
    assert (test.info, "\n".join(test.lines) + "\n") == ("python", CONTENT)
    assert output.lines == ["E   assert 2 == 3", "FAILED tests/test_big.py::test_total"]
    assert fix.info == "suggestion"
    assert "**Fix verified**: the finding's test passes with this patch." in body
    assert body.index("**Fix verified**") > body.index("```suggestion")
    assert raw_html_tags(body) == []
    (row,) = table_rows(publication.summary)
    assert row[3] == "fix suggested · reproduced, fix verified"


GO_TEST = 'package shop\n\nimport "testing"\n\nfunc TestTotal(t *testing.T) {\n}\n'
NODE_TEST = "const test = require('node:test');\n\ntest('total', () => {});\n"


@pytest.mark.parametrize(
    ("path", "content", "language"),
    [
        ("shop/cart_test.go", GO_TEST, "go"),
        ("test/cart.test.js", NODE_TEST, "javascript"),
        ("test/cart.test.ts", NODE_TEST, "typescript"),
        ("tests/test_big.py", CONTENT, "python"),
        ("tests/check_total", CONTENT, ""),
    ],
)
def test_the_test_is_fenced_in_the_language_of_its_file(
    path: str, content: str, language: str
) -> None:
    proven = with_test(result("F1", BIG, 5), FAILING, PASSING)
    finding = proven.finding.model_copy(
        update={"reproduction": Reproduction(path=path, content=content)}
    )
    assert proven.verification is not None
    verification = proven.verification.model_copy(update={"test": path})
    proven = proven.model_copy(update={"finding": finding, "verification": verification})

    blocks, _, _ = read_fences(the_comment(publish(unit(proven))).body)

    assert (blocks[0].info, "\n".join(blocks[0].lines) + "\n") == (language, content)


def test_a_long_test_is_shown_whole_in_its_collapsed_block() -> None:
    long_test = f"def test_total():  # {'y' * 250}\n" + "".join(
        f"    assert total([{n}]) == {n}  # {'x' * 120}\n" for n in range(130)
    )
    proven = with_test(result("F1", BIG, 5), FAILING, PASSING, body=long_test)

    body = the_comment(publish(unit(proven))).body

    blocks, _, _ = read_fences(body)
    assert "\n".join(blocks[0].lines) + "\n" == long_test
    assert body.index("<details>") < body.index(long_test.splitlines()[-1])


def test_a_test_that_proves_nothing_says_why() -> None:
    old_bug = with_test(result("F1", BIG, 5, resolution=Resolution.OPEN), FAILING, FAILING)
    broken = Run(exit_code=2, output_tail="SyntaxError")

    publication = publish(
        unit(old_bug, with_test(result("F2", BIG, 6, resolution=Resolution.OPEN), broken, None))
    )

    bodies = "\n".join(c.body for c in draft(publication).comments)
    assert (
        "**Not a regression**: <code>tests/test&#95;big.py</code> fails at the base too" in bodies
    )
    assert (
        "**Test did not run**: <code>tests/test&#95;big.py</code> (at the head it exited " in bodies
    )
    rows = table_rows(publication.summary)
    assert [r[3] for r in rows] == ["unresolved · fails at base", "unresolved · broken"]


def test_a_finding_withdrawn_by_its_test_names_the_test_in_the_summary() -> None:
    withdrawn = with_test(result("F1", BIG, 5, resolution=Resolution.WITHDRAWN), PASSING, None)

    publication = publish(unit(withdrawn))

    line = next(x for x in publication.summary.split("\n") if x.startswith("- **F1**"))
    assert line.endswith(f"— its test {SHOWN}: it passes at the head")


def test_a_hostile_test_and_output_stay_inside_their_blocks() -> None:
    hostile = "```\n@org/team please look ![x](https://evil.example/x.png)\n````\n<script>\n"
    noisy = Run(exit_code=1, output_tail="~~~\n@octocat ![y](https://evil.example/y.png)\n```")

    publication = publish(unit(with_test(result("F1", BIG, 5), noisy, PASSING, body=hostile)))

    body = the_comment(publication).body
    _, _, unclosed = read_fences(body)
    assert not unclosed
    shown = visible_text(body)
    assert "@org" not in shown
    assert "@octocat" not in shown
    assert "evil.example" not in shown
    assert raw_html_tags(body) == []


NOT_THERE = Run(
    exit_code=2,
    output_tail=(
        "___ ERROR collecting tests/test_big.py ___\n"
        "E   ImportError: cannot import name 'total' from 'src.big'\n"
        "=== short test summary info ===\nERROR tests/test_big.py\n1 error in 0.05s"
    ),
)
"""The base's run of a test of `total`, which the change adds."""


def in_new_code(found: FindingOutcome, *, fix: bool | None) -> FindingOutcome:
    """`found`, its test proven in new code: at the base it cannot import `total`."""
    tested = with_test(found, FAILING, NOT_THERE, fix=fix)
    assert tested.verification is not None
    verification = tested.verification.model_copy(
        update={
            "verdict": Evidence.INTRODUCED,
            "reason": "the base has no name 'total' in src.big, which the change adds",
        }
    )
    return tested.model_copy(update={"verification": verification})


def test_a_finding_proven_in_new_code_says_the_base_does_not_have_the_code() -> None:
    proven = in_new_code(result("F1", BIG, 5), fix=True)

    publication = publish(unit(proven))

    body = the_comment(publication).body
    assert (
        f"**Proven in new code**: {SHOWN} fails at the head; the base does not have this code "
        "(the base has no name 'total' in src.big, which the change adds)." in body
    )
    assert "Not a regression" not in body
    blocks, _, unclosed = read_fences(body)
    assert not unclosed
    at_head, at_base = blocks[1], blocks[2]
    assert at_head.lines == ["E   assert 2 == 3", "FAILED tests/test_big.py::test_total"]
    assert "E   ImportError: cannot import name 'total' from 'src.big'" in at_base.lines
    assert "<summary>How it fails at the base</summary>" in body
    assert "**Fix verified**: the finding's test passes with this patch." in body
    (row,) = table_rows(publication.summary)
    assert row[3] == "fix suggested · proven in new code, fix verified"


GREPS = (
    "from pathlib import Path\n\n\ndef test_it():\n    assert '> 10' in Path('b.py').read_text()\n"
)
READS_TEXT = "It reads big.py's text for '> 10'; it never calls total()."


def test_a_test_ruled_not_to_test_its_claim_is_not_posted_as_proof() -> None:
    """Reproduced by its runs, set aside by the arbiter's ruling: the comment says the test
    was ruled not to test its claim and why, shows the test, and claims no proof."""
    found = result("F1", BIG, 5, resolution=Resolution.WARNING, consensus=Consensus.ARBITER)
    tested = with_test(found, FAILING, PASSING, body=GREPS)
    assert tested.verification is not None
    set_aside = tested.verification.model_copy(update={"relevant": False, "relevance": READS_TEXT})

    publication = publish(unit(tested.model_copy(update={"verification": set_aside})))

    body = the_comment(publication).body
    assert (
        f"**Test ruled not to test its claim**: {SHOWN} (It reads big.py's text for '> 10'; "
        "it never calls total()); its runs prove nothing." in body
    )
    assert "Reproduced" not in body
    assert "How it fails at the head" not in body
    blocks, _, unclosed = read_fences(body)
    assert not unclosed
    assert "\n".join(blocks[0].lines) + "\n" == GREPS
    (row,) = table_rows(publication.summary)
    assert row[3] == "accepted with a warning · ruled not to test its claim"


def test_a_test_ruled_to_test_its_claim_is_posted_as_proof_with_the_ruling() -> None:
    tested = with_test(result("F1", BIG, 5, consensus=Consensus.ARBITER), FAILING, PASSING)
    assert tested.verification is not None
    relevant = tested.verification.model_copy(
        update={"relevant": True, "relevance": "It calls it."}
    )

    body = the_comment(publish(unit(tested.model_copy(update={"verification": relevant})))).body

    assert f"**Reproduced**: {SHOWN} fails at the head and passes at the base." in body
    assert "**Test ruled to test its claim**: It calls it." in body


COMBINATIONS = [
    # (verdict of the test, how the finding ended, its fix check) → its headline, its fix line
    (
        Evidence.INTRODUCED,
        Resolution.FIXED,
        False,
        "**Proven in new code**",
        "**Fix not verified**",
    ),
    (Evidence.INTRODUCED, Resolution.OPEN, False, "**Proven in new code**", "**Patch refused**"),
    (Evidence.REPRODUCED, Resolution.OPEN, False, "**Reproduced**", "**Patch refused**"),
    (Evidence.REPRODUCED, Resolution.OPEN, None, "**Reproduced**", None),
    (Evidence.FAILS_AT_BASE, Resolution.FIXED, True, "**Not a regression**", "**Fix verified**"),
    (
        Evidence.FAILS_AT_BASE,
        Resolution.WARNING,
        False,
        "**Not a regression**",
        "**Patch refused**",
    ),
    (Evidence.FAILS_AT_BASE, Resolution.WARNING, True, "**Not a regression**", None),
    (Evidence.BROKEN, Resolution.FIXED, None, "**Test did not run**", None),
]


@pytest.mark.parametrize(("verdict", "ended", "fix", "headline", "fix_line"), COMBINATIONS)
def test_every_verdict_reads_beside_every_fix_check_without_contradiction(
    verdict: Evidence, ended: Resolution, fix: bool | None, headline: str, fix_line: str | None
) -> None:
    """What the test showed is said first, what the patch did with it after: a proven
    finding is never called no regression, a fix never verified but on a fixed finding, a
    patch its test refused is said refused on a finding left without a fix."""
    found = result("F1", BIG, 5, resolution=ended)
    runs = {
        Evidence.REPRODUCED: (FAILING, PASSING),
        Evidence.FAILS_AT_BASE: (FAILING, FAILING),
        Evidence.BROKEN: (Run(exit_code=2, output_tail="SyntaxError"), None),
    }
    if verdict is Evidence.INTRODUCED:
        shown = in_new_code(found, fix=fix)
    else:
        shown = with_test(found, *runs[verdict], fix=fix)
    assert shown.verification is not None
    assert shown.verification.verdict is verdict

    body = the_comment(publish(unit(shown))).body

    said = [line for line in body.splitlines() if line.startswith("**")]
    proofs = [s for s in said if s.split(":")[0] in HEADLINES]
    fixes = [s for s in said if s.split(":")[0] in FIX_LINES]
    assert [p.split(":")[0] for p in proofs] == [headline]
    assert [f.split(":")[0] for f in fixes] == ([fix_line] if fix_line else [])


HEADLINES = {
    "**Reproduced**",
    "**Proven in new code**",
    "**Not a regression**",
    "**Not reproduced**",
    "**Test did not run**",
    "**Test not run**",
}
FIX_LINES = {"**Fix verified**", "**Fix not verified**", "**Patch refused**"}
