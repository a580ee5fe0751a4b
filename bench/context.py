"""CPU time to build a review's code context: each unit's enclosing scopes, called helpers and
small files, as the coordinator attaches them before the units fan out.

Two reviews, each attached `--reviews` times over from a fresh `agents.context.reading.Reading` (the
first attachment, which also loads the tree-sitter grammar, is not counted):

- the critical-path benchmark's pull request (`bench.critical_path`): 20 one-file units, each
  a 30-line Python module with every line changed;
- a large one: a 3,000-line Python module and a 2,000-line TypeScript file, 30 one-line hunks
  each, cut into units of 4,000 diff tokens, read with the default budget.

Diff parsing and unit splitting are done once, outside the measure; what the process made
before measuring is kept out of the garbage collector's full passes, as in a worker. Prints
the median and best CPU milliseconds per review (`time.process_time`), the units and the
context's size.

    uv run python -m bench.context [--reviews 20]
"""

import argparse
import gc
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from agents.context.reading import Reading
from agents.diff import Diff, ReviewUnit
from bench.critical_path import UNIT_TOKENS
from bench.critical_path import changed_files as critical_path_files
from tests.scenarios.debates import git_diff

LARGE_UNIT_TOKENS = 4_000
HUNKS = 30
PYTHON_LINES = 3_000
TYPESCRIPT_LINES = 2_000


@dataclass(frozen=True)
class Case:
    name: str
    units: list[ReviewUnit]
    sources: dict[str, str]


def python_module(lines: int) -> str:
    """Helpers, then classes whose methods call them and each other, about `lines` long."""
    out = [
        '"""Orders: totals, taxes and refunds."""',
        "",
        "import decimal",
        "",
    ]
    helpers = 0
    while len(out) < lines // 5:
        out += [
            "",
            f"def helper_{helpers}(amount, *, rate=None):",
            f'    """Round `amount` the way ledger {helpers} does."""',
            "    if rate is None:",
            f"        rate = decimal.Decimal('0.{helpers % 9 + 1}')",
            "    value = decimal.Decimal(amount) * rate",
            "    return value.quantize(decimal.Decimal('0.01'))",
        ]
        helpers += 1
    n = 0
    while len(out) < lines:
        out += ["", "", f"class Ledger{n}:", f'    """Ledger number {n}."""']
        for m in range(6):
            out += [
                "",
                "    @property" if m == 0 else f"    def _unused_{m}(self): return {m}",
                f"    def entry_{m}(self, order):",
                f"        total = helper_{(n + m) % helpers}(order.amount)",
            ]
            for i in range(8):
                out += [
                    f"        if order.lines[{i}].kind == 'tax':",
                    f"            total += helper_{(n * m + i) % helpers}(order.lines[{i}].amount)",
                ]
            out += [f"        return self._unused_{m or 1}() + total"]
        n += 1
    return "\n".join(out[:lines]) + "\n"


def typescript_module(lines: int) -> str:
    """Functions, then classes with methods, about `lines` long."""
    out = ["import { Money } from './money';", ""]
    n = 0
    while len(out) < lines // 3:
        out += [f"export function price{n}(amount: number, rate: number): Money {{"]
        out += [f"  const step{i} = amount * rate + {n * 10 + i};" for i in range(10)]
        out += [f"  return new Money(step9 + {n});", "}", ""]
        n += 1
    c = 0
    while len(out) < lines:
        out += [f"export class Cart{c} {{", f"  private items{c}: Money[] = [];", ""]
        for m in range(5):
            out += [f"  total{m}(discount: number): Money {{", f"    let sum = {c * 5 + m};"]
            out += [
                f"    sum += price{(c + m + i) % n}(this.items{c}.length, {m * 8 + i}).cents;"
                for i in range(8)
            ]
            out += [f"    return new Money(sum - discount * {m});", "  }", ""]
        out += ["}", ""]
        c += 1
    return "\n".join(out[:lines]) + "\n"


def with_hunks(text: str, hunks: int) -> str:
    """`text` with one line changed in each of `hunks` evenly spaced places."""
    lines = text.splitlines(keepends=True)
    step = len(lines) // hunks
    for k in range(hunks):
        n = step // 2 + k * step
        while not lines[n].strip() or lines[n].lstrip().startswith(("def ", "class ", "@")):
            n += 1  # change a statement, not a signature
        lines[n] = lines[n].rstrip("\n") + "  # changed\n"
        if text.startswith("import {"):
            lines[n] = lines[n].replace("  # changed", "  // changed")
    return "".join(lines)


def critical_path_case() -> Case:
    files = critical_path_files(20)
    diff = Diff.parse(git_diff(files))
    return Case(
        "critical path: 20 units of 30-line files",
        diff.units(UNIT_TOKENS),
        {path: after for path, (_, after) in files.items()},
    )


def large_case() -> Case:
    python = python_module(PYTHON_LINES)
    typescript = typescript_module(TYPESCRIPT_LINES)
    files = {
        "orders/ledger.py": (python, with_hunks(python, HUNKS)),
        "web/cart.ts": (typescript, with_hunks(typescript, HUNKS)),
    }
    diff = Diff.parse(git_diff(files))
    return Case(
        f"large: {PYTHON_LINES:,}-line .py + {TYPESCRIPT_LINES:,}-line .ts, {HUNKS} hunks each",
        diff.units(LARGE_UNIT_TOKENS),
        {path: after for path, (_, after) in files.items()},
    )


def measure(case: Case, reviews: int) -> None:
    attached = Reading(case.sources).attach(case.units)  # loads the grammars
    times = []
    for _ in range(reviews):
        start = time.process_time()
        Reading(case.sources).attach(case.units)
        times.append((time.process_time() - start) * 1000)
    chars = sum(len(u.context) for u in attached)
    print(
        f"{case.name:<58} {len(case.units):>5} {chars:>13,} "
        f"{statistics.median(times):>11.2f} {min(times):>9.2f}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=20, help="reviews per case (default 20)")
    args = parser.parse_args(argv)
    print(f"{'review':<58} {'units':>5} {'context chars':>13} {'median (ms)':>11} {'best (ms)':>9}")
    cases = [critical_path_case(), large_case()]
    # As a worker does once started (`app.jobs.worker`): what was made so far stays out of
    # the collector's full passes, which would otherwise bill each review for walking it.
    gc.freeze()
    for case in cases:
        measure(case, args.reviews)


if __name__ == "__main__":
    main()
