"""The end of a command's output, kept within bounds, and told apart from what its launcher
printed before it."""

import pytest

from app.verification.process import TAIL_BYTES, TAIL_CHARS, TAIL_LINES, Tail

MARKER = "tiebreak-run-0123"


@pytest.mark.parametrize("size", [1, 3, 7, 4096])
def test_the_marker_is_found_across_chunks_and_what_came_before_it_is_dropped(
    size: int,
) -> None:
    stream = f"bwrap: a warning\n{MARKER}\nthe test's own output\n".encode()
    tail = Tail(MARKER)

    for start in range(0, len(stream), size):
        tail.feed(stream[start : start + size])

    assert tail.started
    assert tail.text() == "the test's own output"


def test_without_the_marker_the_command_never_started() -> None:
    tail = Tail(MARKER)

    tail.feed(b"bwrap: Can't find source path /nowhere: No such file or directory\n")

    assert not tail.started
    assert tail.text() == "bwrap: Can't find source path /nowhere: No such file or directory"


def test_a_flood_keeps_only_its_last_lines_and_characters() -> None:
    tail = Tail(MARKER)
    tail.feed(f"{MARKER}\n".encode())
    line = b"x" * 99 + b"\n"

    for number in range(200_000):  # 20 MB
        tail.feed(line if number % 1000 else b"%d\n" % number)
    kept = tail.text()

    assert len(tail) <= 2 * TAIL_BYTES
    assert len(kept) <= TAIL_CHARS
    assert len(kept.splitlines()) <= TAIL_LINES
    assert kept.endswith("x" * 99)
