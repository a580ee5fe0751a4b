"""`tiebreak eval --verify` on a real history: cases mined from it, each configuration's
findings' tests run at the case's base and introducing commits in bubblewrap's sandbox, over
the real Anthropic SDK against the local fake Messages API."""

import json
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from app.cli.main import main
from tests.app.verification.conftest import needs_bwrap
from tests.fakes.messages_api import Body, FakeMessagesAPI, Reply, Responder
from tests.scenarios.environments import with_pytest
from tests.scenarios.shop import (
    BUG_LINE,
    COMMAND,
    FIX,
    REPRODUCTION,
    History,
    git,
    make_history,
)

_IDS = re.compile(r'"(?:id|finding_id)":"(F\d+)"')
PASSES = "from shop.cart import total\n\n\ndef test_it():\n    assert total([]) == 0\n"
FAILS = "from shop.cart import total\n\n\ndef test_it():\n    assert total([{}]) == {}\n"
"""A test of the off-by-one: fails at the introducing commit, passes at its base."""
BROKEN = "def test_it(:\n    pass\n"


def finding(
    lines: tuple[int, int], claim: str, test: str | None = None, content: str = "", **more: Any
) -> dict[str, Any]:
    shown = {
        "path": "shop/cart.py",
        "start_line": lines[0],
        "end_line": lines[1],
        "severity": "major",
        "claim": claim,
        **more,
    }
    return shown | ({"reproduction": {"path": test, "content": content}} if test else {})


OFF_BY_ONE = finding(
    (BUG_LINE, BUG_LINE),
    "The loop starts at 1: the first price is never added.",
    REPRODUCTION.path,
    REPRODUCTION.content,
)
FALSE_ALARM = finding(
    (5, 5), "An empty cart makes total() raise.", "tests/test_empty.py", PASSES, severity="minor"
)


def reviewer(report: Sequence[dict[str, Any]], on: str = "shop/cart.py") -> Responder:
    """A tester that reports `report` on a change to `on`, the cart by default (with its
    tests when they are asked for), and nothing elsewhere, and accepts every answer; a coder
    that concedes F1 with the fix and disputes the rest."""

    def answer(body: Body) -> Reply:
        diff = "".join(b["text"] for b in body["system"])
        turn = "".join(
            b["text"] for m in body["messages"] for b in m["content"] if b["type"] == "text"
        )
        ids = list(dict.fromkeys(_IDS.findall(turn)))
        match body["tool_choice"]["name"]:
            case "report_findings":
                testing = "reproduction" in json.dumps(body["tools"])
                found = [f if testing else _untested(f) for f in report]
                return {"findings": found if f"+++ b/{on}" in diff else []}
            case "answer_findings":
                return {"answers": [_concede(i) if i == "F1" else _dispute(i) for i in ids]}
            case "evaluate_answers":
                return {"evaluations": [_accept(i) for i in ids]}
        raise AssertionError(f"unexpected {body['tool_choice']['name']}")

    return answer


def _untested(found: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k != "reproduction"}


def _concede(finding_id: str) -> dict[str, Any]:
    return {"finding_id": finding_id, "stance": "concede", "argument": "Right.",
            "patch": FIX.model_dump()}  # fmt: skip


def _dispute(finding_id: str) -> dict[str, Any]:
    return {"finding_id": finding_id, "stance": "dispute", "argument": "It is fine."}


def _accept(finding_id: str) -> dict[str, Any]:
    return {"finding_id": finding_id, "decision": "accept", "reason": "Agreed."}


@pytest.fixture
def history(tmp_path: Path) -> History:
    return make_history(tmp_path)


@pytest.fixture
def clone(history: History, tmp_path: Path) -> Path:
    """A clone holding the history's commits, which the tests run on, with its own
    environment holding pytest, as a person's clone has."""
    git(tmp_path, "clone", "-q", str(history.repo), str(tmp_path / "clone"))
    with_pytest(tmp_path / "clone")
    return tmp_path / "clone"


@pytest.fixture
def cases(history: History, tmp_path: Path) -> Path:
    """The history's cases, and two copies of its buggy case whose tests cannot run: one
    that names no base commit, one whose commits the clone lacks."""
    mined = CliRunner().invoke(main, ["eval", "cases", "--repo", str(history.repo)])
    assert mined.exit_code == 0, mined.output
    found = [json.loads(line) for line in mined.stdout.splitlines()]
    buggy = next(c for c in found if c["bug"])
    no_base = {k: v for k, v in buggy.items() if k != "base_commit"} | {"id": "no-base"}
    elsewhere = buggy | {"id": "elsewhere", "introducing_commit": "d" * 40, "base_commit": "e" * 40}
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in [*found, no_base, elsewhere]))
    return path


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(reviewer([OFF_BY_ONE, FALSE_ALARM])) as fake:
        yield fake


def evaluate(api: FakeMessagesAPI, cases: Path, *args: str) -> Result:
    env = {"ANTHROPIC_API_KEY": api.api_key, "ANTHROPIC_BASE_URL": api.base_url}
    return CliRunner().invoke(main, ["eval", str(cases), *args, "--yes"], env=env)


def worktrees(clone: Path) -> list[str]:
    listed = git(clone, "worktree", "list", "--porcelain")
    return [line for line in listed.splitlines() if line.startswith("worktree ")]


def shown(doc: dict[str, Any]) -> dict[tuple[str, str], list[tuple[int, str | None]]]:
    """What each configuration posted on each case: the findings' lines and verdicts."""
    return {
        (c["id"], c["config"]): [(p["start_line"], p["verdict"]) for p in c["posted"]]
        for c in doc["cases"]
    }


@needs_bwrap
def test_each_posted_finding_carries_what_its_test_showed(
    api: FakeMessagesAPI, history: History, clone: Path, cases: Path, tmp_path: Path
) -> None:
    """Slow: three configurations review the cases, and every finding's test runs in the sandbox
    at its head, its base and with its fix: some twenty runs."""
    args = ["--verify", COMMAND, "--checkout", str(clone), "--configs", "single,vote,trio"]
    args += ["--tolerance", "0", "--json", "--out", str(tmp_path / "results")]

    result = evaluate(api, cases, *args)

    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    posted = shown(doc)
    bug, clean = f"shop-history-bug-{history.bug[:8]}", f"shop-history-clean-{history.clean[:8]}"
    # Without a debate, every finding is posted with its verdict: nothing withdraws it.
    for config in ("single", "vote"):
        assert posted[(bug, config)] == [(BUG_LINE, "reproduced"), (5, "not_reproduced")]
    # The debate withdraws the finding whose test passes; the proven one is fixed, its fix
    # checked by the same test.
    assert posted[(bug, "trio")] == [(BUG_LINE, "reproduced")]
    (trio,) = [c for c in doc["cases"] if (c["id"], c["config"]) == (bug, "trio")]
    assert trio["posted"][0]["fix_verified"] is True
    assert all(posted[(clean, c)] == [] for c in ("single", "vote", "trio"))
    # A case whose tests cannot run is reviewed all the same, its findings not run, saying why.
    not_run = {c["id"]: c for c in doc["cases"] if c["config"] == "single" and c["unverified"]}
    assert set(not_run) == {"no-base", "elsewhere"}
    assert "no base commit" in not_run["no-base"]["unverified"]
    assert f"has no commit {'d' * 40}" in not_run["elsewhere"]["unverified"]
    for case_id in ("no-base", "elsewhere"):
        assert posted[(case_id, "single")] == [(BUG_LINE, "not_run"), (5, "not_run")]
        reasons = {p["verdict_reason"] for p in not_run[case_id]["posted"]}
        assert reasons == {not_run[case_id]["unverified"]}
        assert posted[(case_id, "trio")] == [(BUG_LINE, "not_run")]
    figures = doc["configs"]
    counts = {c: (f["tested"], f["reproduced"]) for c, f in figures.items()}
    assert counts == {"single": (2, 1), "vote": (2, 1), "trio": (1, 1)}
    # One reproduced finding on a buggy case is too few for a precision; the five others
    # (the false alarm, and the findings of the two cases not tested) are enough: on line 7,
    # the two untested findings hit.
    single = figures["single"]
    assert (single["reproduced_precision"], single["reproduced_on_buggy_cases"]) == (None, 1)
    assert (single["other_precision"], single["other_on_buggy_cases"]) == (2 / 5, 5)
    assert (figures["trio"]["other_precision"], figures["trio"]["other_on_buggy_cases"]) == (
        None,
        2,
    )
    # Every throw-away worktree is gone.
    assert worktrees(clone) == [f"worktree {clone}"]

    paid = len(api.requests)
    again = evaluate(api, cases, *args)

    assert again.exit_code == 0, again.output
    assert len(api.requests) == paid
    assert json.loads(again.stdout) == doc


@needs_bwrap
def test_the_report_sets_the_precision_of_reproduced_findings_beside_the_others(
    history: History, clone: Path, cases: Path, tmp_path: Path
) -> None:
    proven = [  # each with a test of the off-by-one: its lines, its claim, a price
        ((7, 7), "The loop skips the first price.", 5),
        ((6, 7), "The running total misses an item.", 3),
        ((7, 8), "Index one is where the sum begins.", 2),
        ((5, 5), "Cents are promised, yet a price vanishes.", 4),
        ((9, 9), "The returned sum drops data.", 8),
    ]
    reproduced = [
        finding(lines, claim, f"tests/test_{n}.py", FAILS.format(price, price))
        for n, (lines, claim, price) in enumerate(proven)
    ]
    others = [
        finding((8, 8), "Adding floats loses precision.", "tests/test_floats.py", PASSES),
        finding((7, 7), "Negative prices are accepted silently."),
        finding((4, 4), "The docstring lacks examples.", "tests/test_doc.py", BROKEN),
    ]
    results = tmp_path / "results"
    args = ["--configs", "single", "--tolerance", "0", "--out", str(results)]
    bug = f"shop-history-bug-{history.bug[:8]}"
    with FakeMessagesAPI(reviewer([*reproduced, *others])) as api:
        verify = ["--verify", COMMAND, "--checkout", str(clone)]
        table = evaluate(api, cases, *args, "--ids", bug, *verify)
        as_json = evaluate(api, cases, *args, "--ids", bug, "--json")

    assert table.exit_code == 0, table.output
    header, single = table.stdout.splitlines()
    assert "tested/reproduced/new code/intended" in header
    # 3 of the 5 reproduced findings are on line 7; the 3 others are too few for a figure.
    assert " 7/5/0/0 " in single
    assert re.search(r" 0\.60 \[[0-9.]+-[0-9.]+\] +— +— +—$", single), single
    assert as_json.exit_code == 0, as_json.output
    figures = json.loads(as_json.stdout)["configs"]["single"]
    assert (figures["tested"], figures["reproduced"]) == (7, 5)
    assert figures["precision"] == pytest.approx(4 / 8)
    assert figures["reproduced_precision"] == pytest.approx(3 / 5)
    assert figures["reproduced_on_buggy_cases"] == 5
    assert figures["other_precision"] is None
    assert figures["other_on_buggy_cases"] == 3


@needs_bwrap
def test_a_finding_on_code_the_commit_adds_is_counted_proven_in_new_code(
    history: History, clone: Path, cases: Path, tmp_path: Path
) -> None:
    """The commit that adds shipping: a test of `ship` cannot import it at the commit's base,
    whatever `ship` does. On a clean case, it is a false alarm all the same."""
    free_shipping = finding(
        (2, 2),
        "ship() charges 5 even for an empty order.",
        "tests/test_shipping.py",
        "from shop.shipping import ship\n\n\ndef test_it():\n    assert ship({}) == 0\n",
        path="shop/shipping.py",
    )
    clean = f"shop-history-clean-{history.clean[:8]}"
    args = ["--configs", "single", "--ids", clean, "--out", str(tmp_path / "results")]
    args += ["--verify", COMMAND, "--checkout", str(clone)]
    with FakeMessagesAPI(reviewer([free_shipping], on="shop/shipping.py")) as api:
        table = evaluate(api, cases, *args)
        as_json = evaluate(api, cases, *args, "--json")

    assert table.exit_code == 0, table.output
    header, single = table.stdout.splitlines()
    assert "tested/reproduced/new code/intended" in header
    assert " 1/0/1/0 " in single
    doc = json.loads(as_json.stdout)
    ((posted,),) = [c["posted"] for c in doc["cases"]]
    assert posted["verdict"] == "introduced"
    assert posted["verdict_reason"] == (
        "the base has no module 'shop.shipping', which the change adds"
    )
    figures = doc["configs"]["single"]
    assert (figures["tested"], figures["reproduced"], figures["introduced"]) == (1, 0, 1)
    assert figures["false_alarms_per_clean_case"] == 1


def test_without_bubblewrap_verification_is_refused_before_any_call(
    api: FakeMessagesAPI, clone: Path, cases: Path, tmp_path: Path
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    found = shutil.which("git")
    assert found is not None
    (tools / "git").symlink_to(found)

    with pytest.MonkeyPatch.context() as env:
        env.setenv("PATH", str(tools))
        result = evaluate(api, cases, "--verify", COMMAND, "--checkout", str(clone))

    assert result.exit_code == 2
    assert "--verify cannot run the tests in a sandbox here" in result.stderr
    assert "apt-get install bubblewrap" in result.stderr
    assert api.requests == []


def test_no_sandbox_runs_the_tests_on_the_host_with_a_warning(
    api: FakeMessagesAPI, history: History, clone: Path, cases: Path
) -> None:
    bug = f"shop-history-bug-{history.bug[:8]}"
    args = ["--verify", COMMAND, "--checkout", str(clone), "--no-sandbox", "--ids", bug]

    result = evaluate(api, cases, *args, "--configs", "single", "--json")

    assert result.exit_code == 0, result.output
    assert "WITHOUT a sandbox" in result.stderr
    (run,) = json.loads(result.stdout)["cases"]
    assert [p["verdict"] for p in run["posted"]] == ["reproduced", "not_reproduced"]
    assert worktrees(clone) == [f"worktree {clone}"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--verify", COMMAND], "--verify needs --checkout DIR"),
        (["--verify", "python -m pytest", "--checkout", "{clone}"], "must name the test as {test}"),
        (["--verify", COMMAND, "--checkout", "{elsewhere}"], "is not a git repository"),
    ],
)
def test_verification_asked_wrongly_is_refused(
    api: FakeMessagesAPI,
    clone: Path,
    cases: Path,
    tmp_path: Path,
    args: list[str],
    message: str,
) -> None:
    (tmp_path / "elsewhere").mkdir()
    paths = {"clone": str(clone), "elsewhere": str(tmp_path / "elsewhere")}
    result = evaluate(api, cases, *(a.format(**paths) if a.startswith("{") else a for a in args))

    assert result.exit_code == 2
    assert message in result.stderr
    assert api.requests == []


@needs_bwrap
def test_the_tester_of_a_checked_out_case_reads_the_project_s_test_of_the_changed_function(
    api: FakeMessagesAPI, history: History, clone: Path, cases: Path
) -> None:
    bug = f"shop-history-bug-{history.bug[:8]}"
    args = ["--verify", COMMAND, "--checkout", str(clone), "--configs", "single"]

    result = evaluate(api, cases, *args, "--ids", f"{bug},no-base")

    assert result.exit_code == 0, result.output
    testers = [r.body for r in api.requests if r.tool == "report_findings"]
    # The project's own test of `total`, from the case's worktree; the case checked out
    # nowhere (no base commit) has the changed file's code alone.
    prompts = ["".join(b["text"] for b in body["system"]) for body in testers]
    assert len(prompts) == 2
    assert sum("def test_an_empty_cart_costs_nothing():" in p for p in prompts) == 1


def test_a_checkout_without_tests_gives_the_tester_the_project_s_other_files(
    api: FakeMessagesAPI, history: History, clone: Path, cases: Path
) -> None:
    bug = f"shop-history-bug-{history.bug[:8]}"
    args = ["--checkout", str(clone), "--configs", "single", "--ids", bug, "--json"]

    result = evaluate(api, cases, *args)

    assert result.exit_code == 0, result.output
    (tester,) = [r.body for r in api.requests if r.tool == "report_findings"]
    prompt = "".join(b["text"] for b in tester["system"])
    assert "def test_an_empty_cart_costs_nothing():" in prompt
    # No test was asked for: the findings are posted untested, and the case says nothing of
    # tests it could not run.
    (case,) = json.loads(result.stdout)["cases"]
    assert case["posted"]
    assert {p["verdict"] for p in case["posted"]} == {None}
    assert case["unverified"] is None
    assert worktrees(clone) == worktrees(clone)[:1]  # its worktree removed
