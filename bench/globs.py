"""How long a config's most hostile globs take to match a changed file's path.

A repository's owner writes `.github/tiebreak.yml`, and its globs are matched against every
changed path, in a worker that serves other installations too. Two shapes, each put in all
three places a config holds globs (`paths.exclude`, `path_instructions`,
`debate.protected_paths`) and matched through them as a review does (the config's path
filter, the unit's instructions, the patch guard):

- `*a` N times then `b`, against a name of L `a`s (`aaaa…a.py`): what backtracking takes
  exponential time on, each `*a` trying every `a` of the path;
- `*a` then K `?`s, against L random `a`s and `b`s: the pattern whose automaton has the most
  states, what costs RE2 the most per character.

Printed per glob and path: the time to read the config (its globs compiled) and the slowest
of `--repeat` matches of the path through all three places. Each row's glob ends in a digit of
its own, so that no row finds the globs of another compiled, their automaton built.

    uv run python -m bench.globs [--wildcards 9 11 13 30] [--lengths 40 200 4000] [--repeat N]
"""

import argparse
import random
import time
from collections.abc import Sequence

from policies.config import RepoConfig, parse_config
from policies.guidance import Guidance
from policies.safety import ProtectedPaths


def config_with(glob: str) -> str:
    return (
        f"paths:\n  exclude: ['{glob}']\n"
        f"path_instructions:\n  - path: '{glob}'\n    instructions: x\n"
        f"debate:\n  protected_paths: ['{glob}']\n"
    )


def read(text: str) -> RepoConfig:
    config, problems = parse_config(text)
    if problems:
        raise SystemExit(f"the config was refused: {problems[0]}")
    return config


def slowest_match(config: RepoConfig, path: str, repeat: int) -> float:
    """The slowest of `repeat` matches of `path` through every place `config` holds globs."""
    paths = config.path_filter()
    guidance = Guidance.of("", config.path_instructions, {})
    guard = ProtectedPaths(config.debate.protected_paths)
    slowest = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        paths.reviews(path)
        guidance.for_paths([path])
        guard.forbids(path)
        slowest = max(slowest, time.perf_counter() - start)
    return slowest


def row(glob: str, shape: str, path: str, repeat: int) -> None:
    start = time.perf_counter()
    config = read(config_with(glob))
    compiled = time.perf_counter() - start
    slowest = slowest_match(config, path, repeat)
    print(f"{shape:<26} {len(path):>7,} {compiled * 1000:>10.2f} {slowest * 1000:>12.3f}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wildcards", type=int, nargs="+", default=[4, 6, 8])
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 200, 4000])
    parser.add_argument("--questions", type=int, nargs="*", default=[3, 5, 7])
    parser.add_argument("--repeat", type=int, default=5, help="matches per row (default 5)")
    args = parser.parse_args(argv)
    print(f"{'glob':<26} {'path':>7} {'read (ms)':>10} {'match (ms)':>12}")
    rows = iter(range(1_000_000))
    for n in args.wildcards:
        for length in args.lengths:
            glob = "*a" * n + f"b{next(rows)}"
            row(glob, f"*a times {n}, then b", "a" * length + ".py", args.repeat)
    letters = random.Random(0)
    for k in args.questions:
        for length in args.lengths:
            path = "".join(letters.choice("ab") for _ in range(length)) + ".py"
            row("*a" + "?" * k + str(next(rows)), f"*a, then ? times {k}", path, args.repeat)


if __name__ == "__main__":
    main()
