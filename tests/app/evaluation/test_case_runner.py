"""The four configurations run on scripted models: what each posts, how it scores, what a
failure and an interrupted run look like."""

from pathlib import Path

import pytest

from agents.errors import LLMUnavailable
from agents.models.llm import LLMRequest
from agents.models.scripted import Reply, ScriptedLLM
from app.evaluation.case_runner import CaseRunner
from app.evaluation.cases import Case
from app.evaluation.report import summaries
from app.evaluation.result_files import ResultFiles
from app.evaluation.results import CaseRun, Config
from app.evaluation.scoring import Summary
from tests.kits.reviewers import Reviewers, case

CASES = [
    case("cart-total", [("shop/cart.py", [5, 6])]),
    case("two-files", [("shop/tax.py", [12]), ("shop/rates.py", [20])], needs_context=True),
    case("clean-1", paths=["shop/clean_one.py"]),
    case("clean-2", paths=["shop/clean_two.py"]),
]


def by_config(found: list[Summary]) -> dict[Config, Summary]:
    return {s.config: s for s in found}


async def test_an_oracle_tester_catches_every_bug_without_a_false_alarm() -> None:
    runs = await CaseRunner(Reviewers(CASES).llm()).run(CASES, list(Config))

    for summary in summaries(CASES, runs, tolerance=3):
        assert summary.recall.value == 1.0, summary.config
        assert summary.precision.value == 1.0, summary.config
        assert summary.false_alarms_per_clean_case == 0.0, summary.config
        assert summary.recall_by_context[True].value == 1.0
        assert summary.failed == 0
        assert summary.billed_tokens_per_case
        assert summary.billed_tokens_per_case > 0
    # The two-file bug is reported in both files, each hitting it.
    two_files = [r for r in runs if r.case_id == "two-files" and r.config is Config.SINGLE]
    assert {p.path for p in two_files[0].posted} == {"shop/tax.py", "shop/rates.py"}


async def test_the_debate_drops_the_false_alarms_a_single_reviewer_posts() -> None:
    runs = await CaseRunner(Reviewers(CASES, noise=True).llm()).run(CASES, list(Config))

    found = by_config(summaries(CASES, runs, tolerance=3))
    single, vote, trio, panel = (found[c] for c in Config)
    assert single.recall.value == trio.recall.value == panel.recall.value == 1.0
    # One false alarm per case: 1 of 2 findings on cart-total, 1 of 3 on two-files.
    assert single.precision.value == pytest.approx(3 / 5)
    assert single.false_alarms_per_clean_case == 1.0
    # The same noise three times over is a majority: voting does not remove it.
    assert vote.precision.value == pytest.approx(3 / 5)
    # The coder disputes the false alarm and the tester withdraws it; the real bug stands.
    assert trio.precision.value == 1.0
    assert trio.false_alarms_per_clean_case == 0.0
    assert panel.precision.value == 1.0
    assert panel.false_alarms_per_clean_case == 0.0
    # The debate costs more calls than the report it starts from.
    assert trio.calls_per_case
    assert single.calls_per_case
    assert trio.calls_per_case > single.calls_per_case


async def test_vote_posts_only_what_two_of_three_reports_raise() -> None:
    reports = iter(
        [
            [("shop/cart.py", 5, "Wrong total computed for the cart.")],
            [("shop/cart.py", 5, "The cart total is computed wrong."), ("shop/cart.py", 30, "x")],
            [("shop/cart.py", 38, "Variable shadowing worries me.")],
        ]
    )

    def tester(request: LLMRequest) -> Reply:
        return {
            "findings": [
                {"path": p, "start_line": n, "end_line": n, "severity": "major", "claim": c}
                for p, n, c in next(reports)
            ]
        }

    runs = await CaseRunner(ScriptedLLM(tester)).run(CASES[:1], [Config.VOTE])

    (run,) = runs
    assert [(p.path, p.start_line) for p in run.posted] == [("shop/cart.py", 5)]


async def test_a_case_whose_calls_fail_is_failed_not_missed_and_the_run_goes_on() -> None:
    reviewers = Reviewers(CASES)

    def script(request: LLMRequest) -> Reply:
        if "shop/cart.py" in request.blocks[0].text:
            return LLMUnavailable("overloaded")
        return reviewers.answer(request)

    runs = await CaseRunner(ScriptedLLM(script)).run(CASES, [Config.SINGLE, Config.TRIO])

    failed = [r for r in runs if r.failed]
    assert {(r.case_id, r.config) for r in failed} == {
        ("cart-total", Config.SINGLE),
        ("cart-total", Config.TRIO),
    }
    assert {r.error for r in failed} == {"the tester could not report findings"}
    assert all(r.posted == () for r in failed)
    for summary in summaries(CASES, runs, tolerance=3):
        # Measured on the three other cases: the failure is not a miss.
        assert (summary.cases, summary.failed) == (3, 1)
        assert summary.recall.value == 1.0


async def test_an_interrupted_run_resumes_without_calling_the_model_again(
    tmp_path: Path,
) -> None:
    files = ResultFiles(tmp_path / "results")
    first = Reviewers(CASES).llm()
    half = await CaseRunner(first, result_files=files).run(CASES[:2], list(Config))
    paid = len(first.requests)

    again = Reviewers(CASES).llm()
    heard: list[CaseRun] = []
    runs = await CaseRunner(again, result_files=files, jobs=2).run(
        CASES, list(Config), heard.append
    )

    # Only the two cases not run before reach the model; the stored ones are read back.
    assert paid > 0
    assert again.requests
    assert all("clean_" in r.blocks[0].text for r in again.requests)
    assert [r for r in runs if r.case_id in {"cart-total", "two-files"}] == half
    assert len(heard) == len(runs) == 4 * len(Config)
    assert (tmp_path / "results" / "trio" / "clean-2.json").is_file()


async def test_a_failed_result_is_run_again_on_resume(tmp_path: Path) -> None:
    files = ResultFiles(tmp_path)
    down = ScriptedLLM(lambda request: LLMUnavailable("overloaded"))
    (failed,) = await CaseRunner(down, result_files=files).run(CASES[:1], [Config.SINGLE])
    assert failed.failed

    (run,) = await CaseRunner(Reviewers(CASES).llm(), result_files=files).run(
        CASES[:1], [Config.SINGLE]
    )

    assert not run.failed
    assert [p.start_line for p in run.posted] == [5]


async def test_a_budget_caps_every_configuration_at_the_same_cost() -> None:
    budget = 20_000
    runs = await CaseRunner(Reviewers(CASES, noise=True).llm(), budget=budget).run(
        CASES, list(Config)
    )

    assert all(r.billed_tokens <= budget for r in runs)


def test_cases_are_case_models() -> None:
    assert all(isinstance(c, Case) and c.buggy == bool(c.bug) for c in CASES)
