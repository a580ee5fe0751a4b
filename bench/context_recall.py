"""Whether the code that holds a bug reaches the tester's prompt, and what that costs.

Over the buggy cases of `eval/cases/real-bugs.jsonl` (each labelled with the new-side lines a
later fix changed), every review unit of the case's diff is given its context as a review
gives it (`agents.context.reading.Reading`: the case's `files`, and, where this code has it and the
case's repository is at hand, what the repository's other files tell about the change), at
each unit's default budget and at half and twice it. The tester's prompt is the unit's diff and
that context; for each case it asks:

- **enclosing scope**: are the signature of the function or class around each labelled line
  (its lines up to the body) and the labelled lines ±3 all in it (in the diff's new side, or
  numbered in the context)?
- **cross-file definitions**: for each name a labelled line uses that the file imports from
  another module of the repository (`from m import n`, `import m as k` then `k.n`, relative
  imports; one re-export followed), is the line that defines it in the prompt? Found here with
  `ast`, apart from the code under measure. Cases whose labelled lines use no such name do not
  count; a case whose repository is not at hand is listed as not measured.

It prints both recalls and the context's tokens per diff token (four characters a token,
`agents.models.tokens`), and what they bill at :data:`BILLED_PER_CONTEXT_TOKEN` each, with the
seconds the cross-file search took. It does the same on the cases it mines (as `tiebreak eval
cases --repo` does) from a small history it builds, whose bugs each misuse another module's
definition (`bench.recall_history`). The repositories are read from `--repos DIR`, a case of
`owner/name` from `DIR/owner+name/repo` or `DIR/owner+name` (a git directory holding the
case's introducing commit); each is extracted there at that commit into a temporary
directory. Run it against another checkout of Tiebreak to compare: it uses what that
checkout's `Reading` offers.

    uv run python -m bench.context_recall [--cases FILE] [--repos DIR] [--factors 0.5,1,2]
"""

import argparse
import ast
import dataclasses
import io
import json
import re
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.context.reading import Reading, default_budget
from agents.diff import Diff, ReviewUnit
from agents.models.tokens import typical_tokens
from app.evaluation.history import Mining, mine_cases
from bench.recall_history import make_history

CASES = Path("eval/cases/real-bugs.jsonl")
FACTORS = (0.5, 1.0, 2.0)
BILLED_PER_CONTEXT_TOKEN = 1.75
"""What `bench.tokens` measures a context token to cost over a review's 6 calls: a cache
write at 1.25, then a read at 0.1 a call."""
AROUND = 3
_NUMBERED = re.compile(r"^ *(\d+) (.*)$")
_HEADER = re.compile(r"^(\S+) lines \d+-\d+(?: \(shown in part\))?: ")


@dataclass
class Prepared:
    """One buggy case, ready to be measured at any budget."""

    case_id: str
    units: list[ReviewUnit]
    sources: dict[str, str]
    needed: dict[str, set[int]]
    """The lines of each file the enclosing-scope question asks for."""
    definitions: list[tuple[str, int]] = field(default_factory=list)
    """Where the names the labelled lines import are defined: (path, `def` line)."""
    related: Any = None
    searched: float | None = None
    """Seconds the cross-file search took; None when it did not run."""
    not_measured: str = ""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--repos", type=Path, help="Where the cases' repositories are.")
    parser.add_argument("--factors", default=",".join(map(str, FACTORS)),
                        help="The budgets, as multiples of each unit's default.")  # fmt: skip
    args = parser.parse_args(argv)
    factors = [float(f) for f in args.factors.split(",")]
    lines = args.cases.read_text().splitlines()
    buggy = [c for c in map(json.loads, lines) if c["bug"]]
    print(f"== {args.cases}")
    report([prepare(c, _repository(args.repos, c["repo"]) if args.repos else None)
            for c in buggy], factors)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="recall-history-") as place:
        repo = make_history(Path(place))
        mined = mine_cases(Mining(repo, "recall-shop"))
        print("\n== a shop's history built here (bench.recall_history), mined as `eval cases`")
        cases = [prepare(c.model_dump(mode="json"), repo / ".git") for c in mined if c.buggy]
        report(cases, factors)


def prepare(case: dict[str, Any], git_dir: Path | None) -> Prepared:
    diff = Diff.parse(case["diff"])
    sources: dict[str, str] = case["files"]
    needed = {bug["path"]: enclosing_lines(sources.get(bug["path"], ""), bug["lines"])
              for bug in case["bug"]}  # fmt: skip
    prepared = Prepared(case["id"], diff.units(), sources, needed)
    if git_dir is None:
        prepared.not_measured = f"{case['repo']} is not at hand"
        return prepared
    with tempfile.TemporaryDirectory(prefix="context-recall-") as place:
        root = Path(place)
        _extract(git_dir, case["introducing_commit"], root)
        for bug in case["bug"]:
            prepared.definitions += imported_definitions(root, bug["path"], set(bug["lines"]))
        prepared.related, prepared.searched = _search(root, diff)
    return prepared


def report(cases: list[Prepared], factors: Sequence[float] = FACTORS) -> None:
    if not cases:
        print("no buggy case")
        return
    searched = sorted(c.searched for c in cases if c.searched is not None)
    measured = [c for c in cases if not c.not_measured]
    with_names = [c for c in measured if c.definitions]
    print(f"{len(cases)} buggy cases; cross-file part measured on {len(measured)}, "
          f"{len(with_names)} of them with imported names on their labelled lines "
          f"({sum(len(c.definitions) for c in with_names)} definitions)")  # fmt: skip
    if searched:
        print(f"cross-file search: median {searched[len(searched) // 2]:.2f} s, "
              f"max {searched[-1]:.2f} s")  # fmt: skip
    for case in cases:
        if case.not_measured:
            print(f"  not measured: {case.case_id}: {case.not_measured}")
    print(f"{'budget':>8} {'enclosing':>10} {'cross-file':>11} {'context/diff':>13} {'billed':>7}")
    for factor in factors:
        enclosing = cross = cross_total = context_tokens = diff_tokens = 0
        for case in cases:
            shown, spent = prompt_lines(case, factor)
            enclosing += all((p, n) in shown for p, ns in case.needed.items() for n in ns)
            cross += sum(d in shown for d in case.definitions)
            cross_total += len(case.definitions)
            context_tokens += spent
            diff_tokens += sum(typical_tokens(u.diff.text) for u in case.units)
        recalls = f"{enclosing / len(cases):>10.2f} {cross / max(cross_total, 1):>11.2f}"
        ratio = context_tokens / diff_tokens
        billed = ratio * BILLED_PER_CONTEXT_TOKEN
        print(f"{f'x{factor:g}':>8} {recalls} {ratio:>13.2f} {billed:>7.2f}")


def prompt_lines(case: Prepared, factor: float) -> tuple[set[tuple[str, int]], int]:
    """The (path, line) pairs the testers' prompts show, over the case's units, and the
    context's tokens."""
    shown: set[tuple[str, int]] = set()
    spent = 0
    offered = {f.name for f in dataclasses.fields(Reading)}
    for unit in case.units:
        budget = max(1, int(default_budget(unit.diff) * factor))
        extra = {"related": case.related} if "related" in offered and case.related else {}
        (read,) = Reading(case.sources, budget, **extra).attach([unit])
        spent += typical_tokens(read.context)
        shown |= {(f.path, n) for f in unit.diff.files for h in f.hunks for n in h.lines}
        shown |= set(numbered(read.context))
    return shown, spent


def numbered(context: str) -> Iterator[tuple[str, int]]:
    """The numbered lines of a context, by the file each block is of."""
    path = ""
    for line in context.splitlines():
        if (header := _HEADER.match(line)) is not None:
            path = header.group(1)
        elif path and (line_number := _NUMBERED.match(line)) is not None:
            yield path, int(line_number.group(1))


def enclosing_lines(text: str, labelled: Sequence[int]) -> set[int]:
    """The labelled lines ±3 and the signature of the innermost function or class around
    each (its lines up to its body)."""
    count = len(text.splitlines())
    wanted = {n for line in labelled for n in range(line - AROUND, line + AROUND + 1)}
    wanted = {n for n in wanted if 1 <= n <= count}
    try:
        nodes = list(ast.walk(ast.parse(text)))
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        scopes: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = [
            n for n in nodes if isinstance(n, kinds)
        ]
    except (SyntaxError, ValueError):
        return wanted
    for line in labelled:
        around = [s for s in scopes if s.lineno <= line <= (s.end_lineno or s.lineno)]
        if around:
            inner = max(around, key=lambda s: s.lineno)
            wanted |= set(range(inner.lineno, max(inner.lineno, inner.body[0].lineno - 1) + 1))
    return wanted


def imported_definitions(root: Path, path: str, labelled: set[int]) -> list[tuple[str, int]]:
    """Where the names the `labelled` lines of `path` import from the repository's other
    modules are defined."""
    try:
        tree = ast.parse((root / path).read_text())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return []
    names: dict[str, tuple[str, str | None]] = {}  # bound name -> (module file, its name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _module_file(root, path, node.module, node.level)
            for alias in node.names:
                sub = _module_file(root, path, f"{node.module or ''}.{alias.name}".strip("."),
                                   node.level)  # fmt: skip
                if sub is not None:
                    names[alias.asname or alias.name] = (sub, None)
                elif module is not None:
                    names[alias.asname or alias.name] = (module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module = _module_file(root, path, alias.name, 0)
                if module is not None and alias.asname:
                    names[alias.asname] = (module, None)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        target: tuple[str, str] | None = None
        if getattr(node, "lineno", None) not in labelled:
            continue
        if isinstance(node, ast.Name) and names.get(node.id, ("", None))[1]:
            module, name = names[node.id]
            target = (module, name) if name else None
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module, name = names.get(node.value.id, ("", "-"))
            target = (module, node.attr) if module and name is None else None
        where = _defined(root, *target) if target else None
        if where is not None and where[0] != path and where not in found:
            found.append(where)
    return found


def _defined(root: Path, module: str, name: str, hops: int = 1) -> tuple[str, int] | None:
    try:
        tree = ast.parse((root / module).read_text())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return module, node.lineno
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return module, node.lineno
    for node in tree.body if hops else ():
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            source = _module_file(root, module, node.module, node.level)
            return _defined(root, source, name, hops - 1) if source else None
    return None


def _module_file(root: Path, importer: str, module: str | None, level: int) -> str | None:
    """The file of the repository `module` names, imported from `importer`; None for a
    module of another project."""
    if level:
        base = Path(importer).parents[level - 1]
        stems = [base.joinpath(*(module or "").split(".")) if module else base]
    else:
        parts = (module or "").split(".")
        stems = [Path(*parts), Path("src", *parts)]
    for stem in stems:
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if (root / candidate).is_file():
                return candidate.as_posix()
    return None


def _search(root: Path, diff: Diff) -> tuple[Any, float | None]:
    try:
        from agents.context.related import related  # absent from older checkouts
        from app.source_tree import DirectoryTree
    except ImportError:
        return None, None
    started = time.perf_counter()
    found = related(diff, DirectoryTree(root))
    return found, time.perf_counter() - started


def _repository(repos: Path, name: str) -> Path | None:
    base = repos / name.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / ".git").is_dir():
            return candidate / ".git"
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def _extract(git_dir: Path, commit: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


if __name__ == "__main__":
    main()
