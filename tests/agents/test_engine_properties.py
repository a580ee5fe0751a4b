"""Properties of the engine over random scripts, malformed and hostile output included.

Whatever the models say, a debate ends within the policy's call bound and under its token
ceiling, every finding ends with exactly one consensus type, and no adopted patch lies
outside the diff or on a protected path; whatever its findings' tests show, at the head and
at the base, it holds to them (:func:`holds_to_its_tests`): a proven finding is never argued
away on the facts, its proof set aside only by a ruling that its test does not exercise its
claim; a project's environment that cannot run tests binds nothing.
"""

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.debate.engine import Debate
from agents.debate.intent_rules import Intents
from agents.debate.machine import DebateMachine
from agents.debate.proofs import Proving
from agents.debate.relevance import DISPUTED, RULED_OUT
from agents.diff import Diff, ReviewUnit
from agents.errors import LLMUnavailable
from agents.models.llm import LLMRequest, LLMResponse, Usage
from agents.models.scripted import Reply, ScriptedLLM, usage_for
from agents.outcome import Consensus, FindingOutcome, MessageKind, Outcome, Resolution
from agents.patches import patch_problem
from agents.protocol import Patch, Reproduction, ToolName
from agents.verification import Evidence, FixCheck, OwnTestRun, Run, Verification
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from policies.panel import Tally, Topology
from policies.safety import ProtectedPaths
from tests.kits.machine import play
from tests.scenarios.debates import (
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    WORKFLOW,
    WORKFLOW_AFTER,
    WORKFLOW_BEFORE,
    git_diff,
    payments_unit,
)
from tests.scenarios.proofs import ADDED, pytest_failed, pytest_uncollected

UNIT = payments_unit()
OWN_TEST = "tests/test_payments.py"
DESCRIPTION = "Refunds are logged. Splits check their parts."
TESTED_UNIT = replace(
    Diff.parse(
        git_diff(
            {
                PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER),
                WORKFLOW: (WORKFLOW_BEFORE, WORKFLOW_AFTER),
                OWN_TEST: (None, "def test_split():\n    assert True\n"),
            }
        )
    ).units()[0],
    intent=DESCRIPTION,
)
"""The payments change with a test of its own and a description, for the coder to cite."""
WORDS = ["It is fine.", "It is wrong.", "See line 3.", "see LINE 4.", "", "Agreed."]
CODE = ["    return payment", "", "x = 1\ny = 2", "    if parts == 0:", "\tpass"]
SEVERITIES = ["blocker", "major", "minor", "nit"] * 5 + ["critical"]


@st.composite
def policies(draw: st.DrawFn) -> DebatePolicy:
    per_turn = draw(st.integers(1, 4))
    initial = draw(st.integers(1_000, 60_000))
    return DebatePolicy(
        max_rounds=draw(st.integers(1, 5)),
        convergence_threshold=draw(st.integers(1, 4)),
        max_findings_per_turn=per_turn,
        max_findings_total=per_turn + draw(st.integers(0, 4)),
        max_exchanges_per_finding=draw(st.integers(1, 4)),
        max_retries=draw(st.integers(2, 4)),
        max_turn_attempts=draw(st.integers(1, 3)),
        initial_budget=initial,
        budget_cap=initial + draw(st.integers(0, 60_000)),
        budget_growth=draw(st.floats(1.0, 3.0)),
        arbiter_budget=draw(st.integers(1_000, 60_000)),
        token_ceiling=draw(st.integers(10_000, 150_000)),
        arbitration=draw(st.booleans()),
        testers=draw(st.sampled_from([1, 1, 2, 3, 4, 5])),
        topology=draw(st.sampled_from(Topology)),
    )


class Chaos:
    """A model that answers at random: often sensibly, sometimes malformed or hostile."""

    def __init__(self, data: st.DataObject) -> None:
        self.draw = data.draw

    def __call__(self, request: LLMRequest) -> Reply:
        mode = self.draw(
            st.sampled_from(["valid"] * 8 + ["schema", "truncated", "no_tool", "down", "ids"])
        )
        if mode == "down":
            return LLMUnavailable("overloaded")
        tool_input = self.tool_input(request)
        if mode == "schema":
            tool_input = dict.fromkeys(tool_input, "garbage") or {"x": 1}
        elif mode == "ids":
            tool_input = self.with_unknown_ids(tool_input)
        usage = self.usage(request, tool_input)
        if mode == "no_tool":
            return LLMResponse(tool_input=None, usage=usage)
        return LLMResponse(tool_input=tool_input, usage=usage, truncated=mode == "truncated")

    def usage(self, request: LLMRequest, tool_input: dict[str, Any]) -> Usage:
        if self.draw(st.booleans()):
            return usage_for(request, tool_input)
        # Any usage a real API could report for this request: at most its prompt and output.
        prompt_bound = request.estimated_tokens() - request.max_output_tokens
        return Usage(
            input_tokens=self.draw(st.integers(0, prompt_bound // 2)),
            cache_read_input_tokens=self.draw(st.integers(0, prompt_bound // 2)),
            output_tokens=self.draw(st.integers(0, request.max_output_tokens)),
        )

    def tool_input(self, request: LLMRequest) -> dict[str, Any]:
        ids = list(request.subject)
        match request.tool.name:
            case ToolName.REPORT_FINDINGS:
                return {"findings": self.findings(6)}
            case ToolName.ANSWER_FINDINGS:
                return {"answers": [self.answer(i) for i in self.some(ids)]}
            case ToolName.EVALUATE_ANSWERS:
                evaluations = [
                    {
                        "finding_id": i,
                        "decision": self.draw(st.sampled_from(["accept", "reject"])),
                        "reason": self.draw(st.sampled_from(WORDS)),
                    }
                    for i in self.some(ids)
                ]
                return {"evaluations": evaluations, "new_findings": self.findings(2)}
            case ToolName.ARBITRATE:
                return {"rulings": [self.ruling(i) for i in self.some(ids)]}

    def with_unknown_ids(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        for items in tool_input.values():
            for item in items:
                if "finding_id" in item:
                    item["finding_id"] = "F99"
        return tool_input

    def some(self, ids: list[str]) -> list[str]:
        chosen = [i for i in ids if self.draw(st.integers(0, 5))]
        return chosen + ([chosen[0]] if chosen and not self.draw(st.integers(0, 9)) else [])

    def location(self) -> tuple[str, int, int]:
        if not self.draw(st.integers(0, 15)):
            return self.draw(
                st.sampled_from(
                    [
                        (PAYMENTS, 1, 1),
                        ("elsewhere.py", 3, 3),
                        (PAYMENTS, 9, 12),
                        (PAYMENTS, 17, 19),
                    ]
                )
            )
        path = self.draw(st.sampled_from([PAYMENTS] * 4 + [WORKFLOW]))
        diff_file = UNIT.diff.file(path)
        assert diff_file is not None
        lines = sorted(diff_file.right_lines())
        start = self.draw(st.sampled_from(lines))
        return path, start, min(start + self.draw(st.integers(0, 1)), lines[-1])

    def findings(self, at_most: int) -> list[dict[str, Any]]:
        found = []
        for _ in range(self.draw(st.integers(0, at_most))):
            path, start, end = self.location()
            found.append(
                {
                    "path": path,
                    "start_line": start,
                    "end_line": end,
                    "severity": self.draw(st.sampled_from(SEVERITIES)),
                    "claim": self.draw(st.sampled_from(WORDS[:4])),
                    "evidence": "",
                }
            )
        return found

    def patch(self) -> dict[str, Any]:
        path, start, end = self.location()
        return {
            "path": path,
            "start_line": start,
            "end_line": end,
            "replacement": self.draw(st.sampled_from(CODE)),
        }

    def answer(self, finding_id: str) -> dict[str, Any]:
        stance = self.draw(st.sampled_from(["concede", "dispute", "irrelevant_test", "intended"]))
        answer: dict[str, Any] = {
            "finding_id": finding_id,
            "stance": stance,
            "argument": self.draw(st.sampled_from(WORDS)),
        }
        if stance == "intended":
            answer["citations"] = [self.citation() for _ in range(self.draw(st.integers(0, 2)))]
            if not self.draw(st.integers(0, 3)):
                answer["patch"] = self.patch()
        elif stance == "concede" or self.draw(st.booleans()):
            answer["patch"] = self.patch()
        return answer

    def citation(self) -> dict[str, Any]:
        """Evidence of intent, in the pull request or not: a quote, lines, a test."""
        kinds = ["quote"] * 3 + ["test"] * 3 + ["unsaid", "lines", "both"]
        kind = self.draw(st.sampled_from(kinds))
        if kind in ("quote", "unsaid"):
            said = "refunds are LOGGED." if kind == "quote" else "It was always so."
            return {"quote": said}
        path, start, end = self.location()
        if kind == "test":
            path, start, end = OWN_TEST, 1, 2
        cited: dict[str, Any] = {"path": path, "start_line": start, "end_line": end}
        return {**cited, "quote": "Refunds are logged."} if kind == "both" else cited

    def ruling(self, finding_id: str) -> dict[str, Any]:
        if not self.draw(st.integers(0, 3)):
            # On relevance: the proof binds and a fix is forced, or the test is set aside and
            # the finding ruled with a fix or a warning; or the change is intended.
            kind = self.draw(st.sampled_from(["test_relevant", "test_irrelevant", "intended"]))
            if kind == "intended":
                return {"finding_id": finding_id, "ruling": "intended", "reasoning": "Meant."}
            ruled = {"finding_id": finding_id, "ruling": kind, "reasoning": "It greps."}
            if kind == "test_relevant" or self.draw(st.booleans()):
                return {**ruled, "patch": self.patch()}
            return {**ruled, "warning": self.draw(st.sampled_from(WORDS))}
        if self.draw(st.booleans()):
            return {
                "finding_id": finding_id,
                "ruling": "force_fix",
                "reasoning": "Fix it.",
                "patch": self.patch(),
            }
        return {
            "finding_id": finding_id,
            "ruling": "accept_with_warning",
            "reasoning": "Let it stand.",
            "warning": self.draw(st.sampled_from(WORDS)),
        }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), data=st.data())
def test_any_script_ends_bounded_with_one_verdict_per_finding(
    policy: DebatePolicy, data: st.DataObject
) -> None:
    llm = ScriptedLLM(Chaos(data))
    outcome = asyncio.run(Debate(llm, policy).run(UNIT))

    assert len(llm.requests) == outcome.calls <= policy.max_calls()
    assert outcome.usage.billed <= policy.token_ceiling
    assert outcome.rounds <= policy.max_rounds
    ids = [f.finding.id for f in outcome.findings]
    assert len(ids) == len(set(ids)) <= policy.max_findings_total * policy.testers
    protected = ProtectedPaths(policy.protected_paths)
    panel = policy.panel()
    for result in outcome.findings:
        if panel.is_panel:
            assert result.votes.keys() <= set(panel.names)
            assert result.raised_by in panel.names
        else:
            assert result.consensus is not Consensus.MAJORITY
            assert result.votes == {}
        if result.consensus is Consensus.MAJORITY and result.resolution is Resolution.OPEN:
            # It stands only when more testers keep it than accept, two or more of them.
            tally = Tally.of(result.votes)
            assert len(tally.keep) > len(tally.accept)
            assert len(tally.keep) >= 2
        if result.patch is not None:
            assert patch_problem(result.patch, UNIT.diff, protected) is None
            assert not protected.forbids(result.patch.path)
        if result.consensus is Consensus.ARBITER:
            assert policy.arbitration
    turns = outcome.transcript.turns
    assert all(t.error for t in turns if t.partial)
    for before, after in itertools.pairwise(turns):
        if after.attempt > 1:
            # A retry follows a refused call of its turn and asks only about its findings.
            assert (after.agent, after.tool, after.attempt) == (
                before.agent,
                before.tool,
                before.attempt + 1,
            )
            assert before.error
            assert set(after.subject) <= set(before.subject)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), data=st.data())
def test_routing_over_random_panels_never_repeats_a_speaker_and_always_ends(
    policy: DebatePolicy, data: st.DataObject
) -> None:
    """With a coder and two to five testers (three agents or more), the engine never gives
    the floor to the previous speaker — whatever the models say — and the debate ends within
    its call bound: AutoGen's selector livelock (issue 7471) cannot happen here."""
    policy = policy.model_copy(update={"testers": data.draw(st.integers(2, 5), label="testers")})
    llm = ScriptedLLM(Chaos(data))
    machine = DebateMachine(policy, UNIT)
    outcome = play(machine.run(), llm, ceiling=TokenCeiling(policy.token_ceiling))
    run = machine.state

    assert all(a != b for a, b in zip(run.floor, run.floor[1:], strict=False))
    assert set(run.floor) <= {"coder", *policy.panel().names}
    assert outcome.calls <= policy.max_calls()
    # Each round gives every tester the floor once, in the panel's order, after the coder.
    laps = len(policy.panel().names) + 1
    for start in range(0, len(run.floor) - laps + 1, laps):
        assert run.floor[start : start + laps] == ["coder", *policy.panel().names]


class ChaosWithTests(Chaos):
    """Chaos whose findings, and evaluations, often come with a test."""

    def tool_input(self, request: LLMRequest) -> dict[str, Any]:
        tool_input = super().tool_input(request)
        for item in [*tool_input.get("findings", []), *tool_input.get("new_findings", [])]:
            self.maybe_test(item)
        for item in tool_input.get("evaluations", []):
            self.maybe_test(item)
        return tool_input

    def maybe_test(self, item: dict[str, Any]) -> None:
        if self.draw(st.integers(0, 3)):
            name = self.draw(st.sampled_from(["a", "b", "c"]))
            item["reproduction"] = {"path": f"tests/test_{name}.py", "content": "assert 0\n"}


HEAD_RUNS = {
    "passes": (0, "1 passed in 0.05s"),
    "fails": (1, pytest_failed("{test}", "AssertionError", "assert 2 == 3")),
    "uncollected": (2, pytest_uncollected("{test}", "SyntaxError", "invalid syntax")),
    "no runner": (1, "/usr/bin/python3: No module named pytest"),
}
BASE_RUNS = {
    **HEAD_RUNS,
    "lacks what the change adds": (
        2,
        pytest_uncollected(
            "{test}", "ImportError", f"cannot import name '{ADDED}' from 'app.payments'"
        ),
    ),
    "lacks what it calls": (
        1,
        pytest_failed("{test}", "NameError", f"name '{ADDED}' is not defined"),
    ),
    "lacks what the change does not add": (
        2,
        pytest_uncollected(
            "{test}", "ImportError", "cannot import name 'ghost' from 'app.payments'"
        ),
    ),
}
"""How a test's run may end at the head, and at the base: its exit code and what it printed
(`{test}` stands for its path)."""
LACKING_ADDED = ("lacks what the change adds", "lacks what it calls")


class ChaosVerifier:
    """Tests that fail, pass or break in any way at the head and the base, and patches that
    pass them or not, at random; what each test showed is kept by its path. Or, in an
    environment that cannot run tests (`unfit`), runs that say so and nothing else."""

    command = "python -m pytest {test}"

    def __init__(self, data: st.DataObject, unfit: bool = False) -> None:
        self.draw = data.draw
        self.unfit = unfit

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        if self.unfit:
            return Verification.unfit(reproduction.path, "No module named pytest")
        at_head = self.draw(st.sampled_from(sorted(HEAD_RUNS)))
        at_base = self.draw(st.sampled_from(sorted(BASE_RUNS)))
        head = _run(HEAD_RUNS[at_head], reproduction.path)
        base = _run(BASE_RUNS[at_base], reproduction.path)
        return Verification.of(reproduction.path, self.command, head, base)

    async def check_fix(self, reproduction: Reproduction, patches: Sequence[Patch]) -> FixCheck:
        if self.unfit:
            return FixCheck.unfit("No module named pytest")
        return FixCheck.of(reproduction.path, Run(exit_code=self.draw(st.sampled_from([0, 1, 2]))))

    async def run_own(self, test: str) -> OwnTestRun:
        if self.unfit:
            return OwnTestRun.unfit(test, "No module named pytest")
        return OwnTestRun.of(test, Run(exit_code=self.draw(st.sampled_from([0, 1, 2]))))


def _run(ending: tuple[int, str], test: str) -> Run:
    code, output = ending
    return Run(exit_code=code, output_tail=output.replace("{test}", test))


def _ran(runs: dict[str, tuple[int, str]], output: str, test: str) -> str | None:
    """Which of `runs` printed `output`."""
    return next((k for k, (_, out) in runs.items() if out.replace("{test}", test) == output), None)


def holds_to_its_tests(outcome: Outcome, unit: ReviewUnit = UNIT) -> None:
    """What every debate over `ChaosVerifier`'s tests comes to, whatever the models said:
    a proven finding (reproduced, or in new code) is never argued away on the facts nor
    waved through — it is fixed, left open, or shown intended by evidence in the pull
    request, and its proof is set aside only by a ruling that its test does not exercise its
    claim, the arbiter's or its testers' agreement, after the coder disputed it so —; an
    intended ending needs cited evidence that checks out (and a ruling of it, a proven
    finding); a test that did not run as one proves nothing, an agreed fix's test does not
    still fail, and a finding whose latest patch left its test failing says so."""
    for result in outcome.findings:
        tested = result.verification
        verdict = tested.verdict if tested else None
        thread = outcome.transcript.thread(result.finding.id)
        if tested is not None and tested.relevant is not None:
            # Settled only on a proven test the coder disputed as not testing its claim.
            assert verdict is not None
            assert verdict.proof
            assert any(
                m.kind is MessageKind.DISPUTE and m.text.startswith(DISPUTED) for m in thread
            )
        if tested is not None and tested.relevant is False:
            # By the arbiter's ruling, or the testers' acceptance of the coder's answer (with
            # the patch it offered, if any): never left open.
            assert result.resolution is not Resolution.OPEN
            assert any(m.text.startswith(RULED_OUT) for m in thread)
        elif verdict is not None and verdict.proof:
            assert result.resolution in (Resolution.FIXED, Resolution.OPEN, Resolution.INTENDED)
        if result.resolution is Resolution.INTENDED:
            holds_to_its_evidence(result, unit)
        if verdict is Evidence.NOT_REPRODUCED:
            assert result.resolution is Resolution.WITHDRAWN
        if tested is not None and verdict is not Evidence.NOT_RUN:
            at_head = _ran(HEAD_RUNS, tested.output_tail, tested.test)
            at_base = _ran(BASE_RUNS, tested.base_output_tail, tested.test)
            # The verdict is how the test failed, not only its exit code.
            if at_head == "fails":
                assert (verdict is Evidence.INTRODUCED) == (at_base in LACKING_ADDED)
                assert (verdict is Evidence.REPRODUCED) == (at_base == "passes")
            if at_head in ("uncollected", "no runner"):
                assert verdict is Evidence.BROKEN
        fixed = result.resolution is Resolution.FIXED
        if fixed and result.consensus in (Consensus.UNANIMOUS, Consensus.MAJORITY):
            # An agreed fix is one its test does not still fail.
            assert result.fix_verified is not False
        checks = [
            m.text
            for m in outcome.transcript.thread(result.finding.id)
            if m.text.startswith("Patch checked against the finding's test")
        ]
        if not fixed and checks and ": fix fails" in checks[-1]:
            assert result.fix_verified is False


def holds_to_its_evidence(result: FindingOutcome, unit: ReviewUnit) -> None:
    """An intended ending cites evidence in the pull request, every citation of it checks
    out, no test it cites fails at the head, and the arbiter rules it only on proof."""
    shown = result.intended
    assert shown is not None
    assert shown.citations
    intents = Intents(unit.pull_changes, unit.intent)
    assert all(intents.citation_problem(c, result.finding) is None for c in shown.citations)
    assert all(run.passed is not False for run in shown.tests)
    if result.consensus is Consensus.ARBITER:
        assert result.verification is not None
        assert result.verification.verdict.proof


PROOF_RULES = ("it is proven", "the patch does not make its test pass")
"""What a refusal that a test's run binds says."""


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), attempts=st.integers(1, 3), data=st.data())
def test_whatever_the_tests_show_a_debate_ends_bounded_and_holds_to_them(
    policy: DebatePolicy, attempts: int, data: st.DataObject
) -> None:
    llm = ScriptedLLM(ChaosWithTests(data))
    proving = Proving(ChaosVerifier(data), max_attempts=attempts)
    outcome = asyncio.run(Debate(llm, policy, proving=proving).run(TESTED_UNIT))

    assert len(llm.requests) == outcome.calls <= policy.max_calls(attempts - 1)
    assert outcome.usage.billed <= policy.token_ceiling
    holds_to_its_tests(outcome, TESTED_UNIT)


class ChaosOnProof(ChaosWithTests):
    """Chaos whose findings often come with a test, and whose evaluations do not: every test
    reproduces (`ProvenChaos`), so a new test in an evaluation would only be refused."""

    def tool_input(self, request: LLMRequest) -> dict[str, Any]:
        tool_input = Chaos.tool_input(self, request)
        for item in [*tool_input.get("findings", []), *tool_input.get("new_findings", [])]:
            self.maybe_test(item)
        return tool_input


class ProvenChaos(ChaosVerifier):
    """Every test reproduces its finding: the debates where a proven finding meets the
    coder's `intended` answers, the testers' votes and the arbiter's rulings at random."""

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        head = _run(HEAD_RUNS["fails"], reproduction.path)
        base = _run(BASE_RUNS["passes"], reproduction.path)
        return Verification.of(reproduction.path, self.command, head, base)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), data=st.data())
def test_a_proven_finding_ends_intended_only_on_evidence_that_holds(
    policy: DebatePolicy, data: st.DataObject
) -> None:
    llm = ScriptedLLM(ChaosWithTests(data))
    outcome = asyncio.run(Debate(llm, policy, proving=Proving(ProvenChaos(data))).run(TESTED_UNIT))

    holds_to_its_tests(outcome, TESTED_UNIT)
    for result in outcome.findings:
        tested = result.verification
        if tested is not None and tested.verdict.proof and tested.relevant is not False:
            # Never argued away on the facts: no warning, no withdrawal (a test set aside as
            # not testing its claim is no proof: `holds_to_its_tests` holds it to its ruling).
            assert result.resolution not in (Resolution.WARNING, Resolution.WITHDRAWN)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), attempts=st.integers(1, 3), data=st.data())
def test_an_environment_that_cannot_run_tests_binds_nothing(
    policy: DebatePolicy, attempts: int, data: st.DataObject
) -> None:
    llm = ScriptedLLM(ChaosWithTests(data))
    proving = Proving(ChaosVerifier(data, unfit=True), max_attempts=attempts)
    outcome = asyncio.run(Debate(llm, policy, proving=proving).run(TESTED_UNIT))

    assert len(llm.requests) == outcome.calls <= policy.max_calls(attempts - 1)
    for result in outcome.findings:
        if result.verification is not None:
            assert result.verification.verdict is Evidence.BROKEN
            assert result.verification.environment == "No module named pytest"
        assert result.fix_verified is None
    # No dispute, acceptance or ruling was refused for what a test's run showed.
    refused = [t.error for t in outcome.transcript.turns if t.error]
    assert [e for e in refused if any(rule in e for rule in PROOF_RULES)] == []
