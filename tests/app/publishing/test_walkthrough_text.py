"""The walkthrough as the summary shows it: every file once, model text inert, bounded, and
a diagram only as a sanitised sequence diagram."""

import pytest

from agents.outcome import Outcome, StopReason, Transcript
from agents.protocol import AttentionArea, FileLine, UnitWalkthrough
from agents.review import Review
from agents.walkthrough import walkthrough
from app.publishing.mermaid import MAX_LINES, sequence_diagram
from app.publishing.walkthrough_text import GROUP_FROM, MAX_FILES, walkthrough_section


def unit(
    unit_id: str,
    paths: tuple[str, ...],
    described: UnitWalkthrough | None,
    stop: StopReason = StopReason.NO_FINDINGS,
) -> Outcome:
    return Outcome(
        unit_id=unit_id,
        stop=stop,
        findings=[],
        rounds=0,
        calls=1,
        failed_turns=0,
        dropped_findings=0,
        usage_by_role={},
        budget_history={},
        transcript=Transcript(),
        paths=paths,
        walkthrough=described,
        error="the tester could not report findings" if stop is StopReason.SEED_FAILED else None,
    )


def described(
    *paths: str, effort: int | None = None, text: str = "Does a thing."
) -> UnitWalkthrough:
    return UnitWalkthrough(
        description=text,
        files=[FileLine(path=p, summary=f"changes {p}") for p in paths],
        effort=effort,
    )


def rendered(review: Review) -> str:
    return "".join(walkthrough_section(walkthrough(review)))


def test_units_merge_into_one_walkthrough_naming_each_file_once_with_the_largest_effort() -> None:
    review = Review(
        units=[
            unit("u1", ("a.py", "b.py"), described("a.py", "b.py", effort=2)),
            unit("u2", ("b.py", "c.py"), described("b.py", "c.py", effort=4)),
            unit("u3", ("d.py",), None, StopReason.SEED_FAILED),
        ]
    )

    text = rendered(review)

    for path in ("a.py", "b.py", "c.py", "d.py"):
        assert text.count(f"<code>{path}</code>") == 1
    assert "**Review effort:** 4/5" in text
    assert "<code>d.py</code>: not reviewed" in text


def test_no_unit_described_no_walkthrough() -> None:
    assert rendered(Review(units=[unit("u1", ("a.py",), None)])) == ""


def test_many_files_are_grouped_by_directory_and_bounded() -> None:
    paths = tuple(f"pkg{i % 3}/m{i}.py" for i in range(MAX_FILES + 5))
    text = rendered(Review(units=[unit("u1", paths, described(*paths))]))

    assert len(paths) >= GROUP_FROM
    assert "- <code>pkg0/</code>\n" in text
    assert "and 5 more files" in text
    assert text.count("  - <code>pkg") == MAX_FILES


@pytest.mark.parametrize(
    "hostile",
    [
        "ping @octo/security now",
        "thanks @mona",
        "![pixel](https://evil.example/p.png)",
        "[click](https://evil.example)",
        "<img src=x onerror=alert(1)>",
        "```suggestion\nrm -rf /\n```",
    ],
)
def test_model_text_in_the_walkthrough_is_inert(hostile: str) -> None:
    change = UnitWalkthrough(
        description=hostile,
        files=[FileLine(path="a.py", summary=hostile)],
        attention=[AttentionArea(path="a.py", why=hostile)],
    )
    text = rendered(Review(units=[unit("u1", ("a.py",), change)]))

    assert "@octo" not in text
    assert "@mona" not in text
    assert "](" not in text.replace("\\](", "")
    assert "<img" not in text
    assert "```suggestion" not in text


@pytest.mark.parametrize(
    ("diagram", "kept"),
    [
        pytest.param(
            "sequenceDiagram\nparticipant Api\nApi->>Db: save order\nDb-->>Api: id",
            [
                "sequenceDiagram",
                "    participant Api",
                "    Api->>Db: save order",
                "    Db-->>Api: id",
            ],
            id="a plain diagram",
        ),
        pytest.param(
            'sequenceDiagram\nA->>B: go\nclick A href "https://evil.example"\nlink A: x@https://e',
            ["sequenceDiagram", "    A->>B: go"],
            id="click and link dropped",
        ),
        pytest.param(
            "%%{init: {'securityLevel': 'loose'}}%%\nsequenceDiagram\nA->>B: go",
            None,
            id="configuration first",
        ),
        pytest.param(
            "sequenceDiagram\nA->>B: <img src=x> see https://evil.example now",
            ["sequenceDiagram", "    A->>B: img src=x see now"],
            id="html and addresses in a label",
        ),
        pytest.param(
            "sequenceDiagram\nloop <img src=x>\nA->>B: go\nend\nalt retry (twice)\nend",
            ["sequenceDiagram", "    A->>B: go", "    end", "    alt retry (twice)", "    end"],
            id="a block's label in plain words only",
        ),
        pytest.param("graph TD\nA-->B", None, id="not a sequence diagram"),
        pytest.param("sequenceDiagram\nclick A call alert()", None, id="nothing left"),
    ],
)
def test_a_diagram_is_kept_only_as_a_sanitised_sequence_diagram(
    diagram: str, kept: list[str] | None
) -> None:
    assert sequence_diagram(diagram) == kept


def test_a_diagram_is_bounded() -> None:
    diagram = "sequenceDiagram\n" + "A->>B: step\n" * (MAX_LINES * 3)
    lines = sequence_diagram(diagram)

    assert lines is not None
    assert len(lines) == MAX_LINES + 1


def test_a_diagram_lands_in_its_own_mermaid_block() -> None:
    change = described("a.py").model_copy(update={"diagram": "sequenceDiagram\nA->>B: go"})
    text = rendered(Review(units=[unit("u1", ("a.py",), change)]))

    assert "```mermaid\nsequenceDiagram\n    A->>B: go\n```" in text
