"""Loop detection: normalised message digests, repeats and oscillations."""

import pytest

from policies.budget import edge_name
from policies.loops import Loop, LoopKind, LoopMonitor, message_digest

EDGE = edge_name("coder", "tester")
OTHER_EDGE = edge_name("arbiter", "coder")


# -- normalisation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("See line 10", "see   LINE 12"),
        ("The guard is missing.", "the guard is MISSING."),
        ("two\tspaces\nand newline", "two spaces and newline"),
        ("  padded  ", "padded"),
        ("lines 3-7 divide by zero", "lines 120-415 divide by zero"),
        ("Straße", "STRASSE"),  # case folding, not just lowering
    ],
)
def test_prose_ignores_case_whitespace_and_digits(first: str, second: str) -> None:
    assert message_digest("coder", "dispute", first) == message_digest("coder", "dispute", second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("the guard is missing", "the guard is present"),
        ("see line 10", "see line"),
        ("divide by zero", "dividebyzero"),
    ],
)
def test_different_prose_differs(first: str, second: str) -> None:
    assert message_digest("coder", "dispute", first) != message_digest("coder", "dispute", second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("x = 10", "x  =  10"),
        ("if x:\n    return 1\n", "if x: return 1"),
        ("  y = 2  ", "y = 2"),
    ],
)
def test_code_ignores_only_whitespace_runs(first: str, second: str) -> None:
    assert message_digest("coder", "dispute", "fix", first) == message_digest(
        "coder", "dispute", "fix", second
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("x = 10", "x = 20"),  # a different number is a different patch
        ("X = 10", "x = 10"),  # case matters in code
        ("x = 10", "x=10"),  # whitespace is collapsed, not removed
    ],
)
def test_code_changes_are_not_normalised_away(first: str, second: str) -> None:
    assert message_digest("coder", "dispute", "fix", first) != message_digest(
        "coder", "dispute", "fix", second
    )


def test_a_patch_makes_a_different_message_than_none() -> None:
    assert message_digest("coder", "dispute", "fix") != message_digest(
        "coder", "dispute", "fix", "x = 1"
    )


def test_speaker_is_part_of_the_digest() -> None:
    assert message_digest("coder", "dispute", "no") != message_digest("tester", "dispute", "no")


def test_kind_is_part_of_the_digest() -> None:
    assert message_digest("coder", "dispute", "ok") != message_digest("coder", "concede", "ok")


def test_digest_is_sha256_hex() -> None:
    digest = message_digest("coder", "dispute", "text", "code")

    assert len(digest) == 64
    assert int(digest, 16) >= 0


# -- repeats -----------------------------------------------------------------------------


@pytest.mark.parametrize("max_retries", [2, 3, 5])
def test_the_same_digest_max_retries_times_is_a_repeat(max_retries: int) -> None:
    monitor = LoopMonitor(max_retries)
    digest = message_digest("coder", "dispute", "the test is wrong")

    for _ in range(max_retries - 1):
        assert monitor.observe(EDGE, "F1", "coder", digest) is None
    loop = monitor.observe(EDGE, "F1", "coder", digest)

    assert loop == Loop(EDGE, "F1", "coder", LoopKind.REPEAT)


def test_normalised_rewordings_count_as_the_same_message() -> None:
    monitor = LoopMonitor(3)
    messages = ["See line 10", "see   LINE 12", "SEE line 99"]

    loops = [
        monitor.observe(EDGE, "F1", "coder", message_digest("coder", "dispute", text))
        for text in messages
    ]

    assert loops[:2] == [None, None]
    assert loops[2] is not None
    assert loops[2].kind is LoopKind.REPEAT


def test_same_text_on_another_finding_is_not_a_repeat() -> None:
    monitor = LoopMonitor(3)
    digest = message_digest("coder", "dispute", "the test is wrong")

    assert monitor.observe(EDGE, "F1", "coder", digest) is None
    assert monitor.observe(EDGE, "F2", "coder", digest) is None
    assert monitor.observe(EDGE, "F3", "coder", digest) is None
    assert monitor.observe(EDGE, "F1", "coder", digest) is None


def test_same_text_on_another_edge_is_not_a_repeat() -> None:
    monitor = LoopMonitor(3)
    digest = message_digest("coder", "dispute", "the test is wrong")

    assert monitor.observe(EDGE, "F1", "coder", digest) is None
    assert monitor.observe(OTHER_EDGE, "F1", "coder", digest) is None
    assert monitor.observe(EDGE, "F1", "coder", digest) is None
    assert monitor.observe(OTHER_EDGE, "F1", "coder", digest) is None


def test_same_words_from_two_speakers_are_not_a_repeat() -> None:
    monitor = LoopMonitor(2)

    assert monitor.observe(EDGE, "F1", "coder", message_digest("coder", "say", "no")) is None
    assert monitor.observe(EDGE, "F1", "tester", message_digest("tester", "say", "no")) is None


# -- oscillations ------------------------------------------------------------------------


def test_abab_by_one_speaker_is_an_oscillation_even_with_many_retries_allowed() -> None:
    monitor = LoopMonitor(20)
    a = message_digest("coder", "dispute", "use a lock")
    b = message_digest("coder", "dispute", "use a queue")

    assert monitor.observe(EDGE, "F1", "coder", a) is None
    assert monitor.observe(EDGE, "F1", "coder", b) is None
    assert monitor.observe(EDGE, "F1", "coder", a) is None  # A-B-A is not yet a loop
    loop = monitor.observe(EDGE, "F1", "coder", b)

    assert loop == Loop(EDGE, "F1", "coder", LoopKind.OSCILLATION)


def test_oscillation_is_per_speaker_even_when_interleaved() -> None:
    monitor = LoopMonitor(20)
    a = message_digest("coder", "dispute", "use a lock")
    b = message_digest("coder", "dispute", "use a queue")
    replies = [message_digest("tester", "reject", f"objection {n}") for n in "wxyz"]

    results = []
    for coder_says, tester_says in zip([a, b, a, b], replies, strict=True):
        results.append(monitor.observe(EDGE, "F1", "coder", coder_says))
        results.append(monitor.observe(EDGE, "F1", "tester", tester_says))

    assert results[:6] == [None] * 6
    assert results[6] == Loop(EDGE, "F1", "coder", LoopKind.OSCILLATION)


def test_two_speakers_alternating_are_not_one_speakers_oscillation() -> None:
    monitor = LoopMonitor(20)
    a = message_digest("coder", "dispute", "use a lock")
    b = message_digest("coder", "dispute", "use a queue")

    assert monitor.observe(EDGE, "F1", "coder", a) is None
    assert monitor.observe(EDGE, "F1", "tester", b) is None
    assert monitor.observe(EDGE, "F1", "coder", a) is None
    assert monitor.observe(EDGE, "F1", "tester", b) is None


@pytest.mark.parametrize(
    "sequence",
    ["ABCA", "ABCB", "AABB", "ABBA", "ABAC"],
)
def test_non_alternating_sequences_are_not_oscillations(sequence: str) -> None:
    monitor = LoopMonitor(20)

    results = [
        monitor.observe(EDGE, "F1", "coder", message_digest("coder", "dispute", f"answer {c}"))
        for c in sequence
    ]

    assert results == [None] * len(sequence)


# -- describe ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(LoopKind))
def test_describe_names_speaker_and_finding(kind: LoopKind) -> None:
    text = Loop(EDGE, "F7", "coder", kind).describe()

    assert "coder" in text
    assert "F7" in text


def test_describe_tells_repeat_from_oscillation() -> None:
    repeat = Loop(EDGE, "F1", "coder", LoopKind.REPEAT).describe()
    oscillation = Loop(EDGE, "F1", "coder", LoopKind.OSCILLATION).describe()

    assert repeat != oscillation
