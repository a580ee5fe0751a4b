"""How long reading the slash commands of GitHub's largest comment takes on the web server.

A comment's commands are parsed in the webhook handler, on the server's event loop, before
anyone's access is checked: whoever may comment chooses what is parsed. Each comment below
is 65,536 characters, GitHub's limit, in the shapes that cost the most: one distinct command
line after another (unknown lines, `budget N` with a new N, or every command first), and
plain prose that holds no command. Printed per shape: the median time of one parse and how
many commands it took (never more than `app.slash.MAX_COMMANDS`).

    uv run python -m bench.commands [--repeat N]
"""

import argparse
import statistics
import time
from collections.abc import Callable, Sequence

from app.slash import parse_commands

COMMENT_LIMIT = 65_536
"""GitHub refuses a comment body longer than this many characters."""


def filled(line: Callable[[int], str], head: Sequence[str] = ()) -> str:
    """`head`, then `line(0)`, `line(1)`, ... until the comment is full."""
    lines, size, i = list(head), sum(len(h) + 1 for h in head), 0
    while size < COMMENT_LIMIT:
        lines.append(line(i))
        size += len(lines[-1]) + 1
        i += 1
    return "\n".join(lines)[:COMMENT_LIMIT]


SEVEN = [f"/tiebreak {c}" for c in ("stop", "help", "review", "apply", "resolve", "arbitrate")]

SHAPES: dict[str, str] = {
    "distinct unknown commands": filled(lambda i: f"/tiebreak deploy {i}"),
    "distinct budgets": filled(lambda i: f"/tiebreak budget {10_000 + i}"),
    "every command, then distinct ones": filled(
        lambda i: f"/tiebreak x{i}", [*SEVEN, "/tiebreak budget 50000"]
    ),
    "prose, no command": filled(lambda i: f"Line {i} of a long description, no command."),
}


def measure(body: str, repeat: int) -> tuple[float, int]:
    """The median seconds of one parse of `body`, and how many commands it took."""
    times = []
    taken = 0
    for _ in range(repeat):
        start = time.perf_counter()
        taken = len(parse_commands(body))
        times.append(time.perf_counter() - start)
    return statistics.median(times), taken


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="parses per shape (default 20)")
    args = parser.parse_args(argv)
    print(f"{'comment of 65,536 characters':<36} {'parse (ms)':>10} {'commands':>9}")
    for name, body in SHAPES.items():
        seconds, taken = measure(body, args.repeat)
        print(f"{name:<36} {seconds * 1000:>10.2f} {taken:>9}")


if __name__ == "__main__":
    main()
