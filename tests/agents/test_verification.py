"""What a test's runs at the head and the base prove, read from how each failed — not from
their exit codes alone — on real runners' output (`tests/fixtures/test_output/`): a base that
lacks only what the change adds proves the finding in new code; the same failure at both is a
bug older than the change; a test that did not run as one (a collection error, a runner that
ran nothing or is not installed) proves nothing, and says why."""

import pytest

from agents.diff import Diff
from agents.verification import Evidence, FixCheck, OwnTestRun, Retest, Run, Verification
from tests.agents.test_failures import recorded
from tests.scenarios.debates import git_diff
from tests.scenarios.discounts import CART_WITH_DISCOUNTS, COUPONS
from tests.scenarios.shop import CART_BASE

CHANGE = Diff.parse(
    git_diff({"shop/cart.py": (CART_BASE, CART_WITH_DISCOUNTS), "shop/coupons.py": (None, COUPONS)})
)
"""The change that adds `discounted` to the cart and creates `shop/coupons.py`."""
COUNT_CHANGE = Diff.parse(
    git_diff({"shop/cart.py": (CART_BASE, CART_BASE + "\n\ndef count(prices):\n    return 0\n")})
)
"""The change that adds `count` to the cart."""
PAYMENTS_FEE = Diff.parse(
    git_diff(
        {"app/payments.py": ("def refund(p, a):\n    return p\n", "def fee(a):\n    return a\n")}
    )
)
EXITS = {
    "pytest_assertion": 1,
    "pytest_discount_assertion": 1,
    "pytest_name_not_collected": 2,
    "pytest_module_not_collected": 2,
    "pytest_attribute": 1,
    "pytest_type_error": 1,
    "pytest_syntax_error": 2,
    "pytest_no_tests": 5,
    "pytest_missing": 1,
    "pytest_no_numpy": 1,
    "unittest_assertion": 1,
    "unittest_discount_assertion": 1,
    "unittest_name_not_loaded": 1,
    "unittest_attribute": 1,
    "unittest_no_tests": 0,
    "unittest_without_pytest": 1,
    "script_assertion": 1,
    "script_attribute": 1,
    "pytest_count_assertion": 1,
    "pytest_skipped": 0,
    "pytest_module_skipped": 5,
    "unittest_count_assertion": 1,
    "unittest_skipped": 0,
}
"""How each recorded run exited."""


def ran(name: str) -> Run:
    return Run(exit_code=EXITS[name], output_tail=recorded(name), seconds=1.0)


def judged(test: str, head: str, base: str | None, change: Diff = CHANGE) -> Verification:
    """The runs recorded as `head` and `base`, judged as the debate judges them."""
    shown = Verification.of(test, "cmd {test}", ran(head), ran(base) if base else None)
    return shown.judged(change.additions())


NOT_THERE = "the base has no name 'discounted' in shop.cart, which the change adds"
SKIPPED = "the test was skipped (1 skipped)"
"""What pytest's and unittest's totals show of a test each skipped."""
SKIPPED_AT_HEAD = f"at the head {SKIPPED}"


@pytest.mark.parametrize(
    ("test", "head", "base", "verdict", "reason"),
    [
        (
            "tests/test_discounted.py",
            "pytest_discount_assertion",
            "pytest_name_not_collected",
            Evidence.INTRODUCED,
            NOT_THERE,
        ),
        (
            "tests/test_attribute.py",
            "pytest_discount_assertion",
            "pytest_attribute",
            Evidence.INTRODUCED,
            NOT_THERE,
        ),
        (
            "tests/test_coupons.py",
            "pytest_assertion",
            "pytest_module_not_collected",
            Evidence.INTRODUCED,
            "the base has no module 'shop.coupons', which the change adds",
        ),
        (
            "tests/test_u_discounted.py",
            "unittest_discount_assertion",
            "unittest_name_not_loaded",
            Evidence.INTRODUCED,
            NOT_THERE,
        ),
        (
            "tests/test_u_attribute.py",
            "unittest_discount_assertion",
            "unittest_attribute",
            Evidence.INTRODUCED,
            NOT_THERE,
        ),
        (
            "tests/test_discounted.py",
            "pytest_discount_assertion",
            "pytest_discount_assertion",
            Evidence.FAILS_AT_BASE,
            "the same failure at the base and the head: AssertionError at line 5: assert 360 == 90",
        ),
        (
            "tests/test_floats.py",
            "pytest_type_error",
            "pytest_assertion",
            Evidence.FAILS_AT_BASE,
            "another failure at the base: AssertionError: assert 7 == 12",
        ),
        (
            "tests/test_total.py",
            "pytest_missing",
            "pytest_missing",
            Evidence.BROKEN,
            "at the head No module named pytest: the test's runner is not installed where it runs",
        ),
        (
            "tests/test_u_pytest.py",
            "unittest_without_pytest",
            "unittest_without_pytest",
            Evidence.BROKEN,
            "at the head No module named 'pytest': the test's runner is not installed where it "
            "runs",
        ),
        (
            "tests/test_numpy.py",
            "pytest_no_numpy",
            "pytest_no_numpy",
            Evidence.BROKEN,
            "it cannot import numpy at the head or the base",
        ),
        (
            "tests/test_nothing.py",
            "pytest_no_tests",
            None,
            Evidence.BROKEN,
            "at the head no tests ran",
        ),
        (
            "tests/test_nothing.py",
            "unittest_no_tests",
            None,
            Evidence.BROKEN,
            "at the head no tests ran",
        ),
        (
            "tests/test_syntax.py",
            "pytest_syntax_error",
            None,
            Evidence.BROKEN,
            "at the head the test could not be loaded (SyntaxError at line 1: invalid syntax)",
        ),
        (
            "tests/test_u_discounted.py",
            "unittest_name_not_loaded",
            "unittest_name_not_loaded",
            Evidence.BROKEN,
            "at the head the test could not be loaded (ImportError at line 3: cannot import name "
            "'discounted' from 'shop.cart' (/work/shop/shop/cart.py))",
        ),
    ],
)
def test_the_runs_prove_what_their_failures_show(
    test: str, head: str, base: str | None, verdict: Evidence, reason: str
) -> None:
    shown = judged(test, head, base)

    assert (shown.verdict, shown.reason) == (verdict, reason)


PASSES = {
    "pytest": "1 passed in 0.05s\n",
    "unittest": "." + "\n" + "-" * 70 + "\nRan 1 test in 0.000s\n\nOK\n",
    "script": "",
}


@pytest.mark.parametrize(
    ("test", "head", "runner"),
    [
        ("tests/test_total.py", "pytest_assertion", "pytest"),
        ("tests/test_floats.py", "pytest_type_error", "pytest"),
        ("tests/test_u_total.py", "unittest_assertion", "unittest"),
        ("fee.py", "script_assertion", "script"),
    ],
)
def test_a_regression_fails_at_the_head_and_passes_at_the_base(
    test: str, head: str, runner: str
) -> None:
    """However the head fails — an assertion, an exception raised deep in the code under
    test — a base that passes makes it reproduced, as a real bug's regression test with its
    fix reverted reads."""
    shown = Verification.of(test, "cmd", ran(head), Run(exit_code=0, output_tail=PASSES[runner]))

    judged = shown.judged(CHANGE.additions())

    assert (judged.verdict, judged.reason) == (
        Evidence.REPRODUCED,
        "it fails at the head and passes at the base",
    )


def test_a_base_that_lacks_what_the_change_does_not_add_proves_nothing() -> None:
    """The payments change adds `fee`, not `discounted`: the base's collection error is only
    that, and its import error under unittest a bug older than the change, or a wrong test."""
    collected = judged(
        "tests/test_discounted.py",
        "pytest_discount_assertion",
        "pytest_name_not_collected",
        PAYMENTS_FEE,
    )
    loaded = judged(
        "tests/test_u_attribute.py",
        "unittest_discount_assertion",
        "unittest_attribute",
        PAYMENTS_FEE,
    )

    assert collected.verdict is Evidence.BROKEN
    assert collected.reason.startswith(
        "it fails at the head, but at the base the test could not be loaded (ImportError"
    )
    assert loaded.verdict is Evidence.FAILS_AT_BASE


def test_a_script_whose_base_lacks_the_function_it_calls_is_proven_in_new_code() -> None:
    shown = judged("fee.py", "script_assertion", "script_attribute", PAYMENTS_FEE)

    assert shown.verdict is Evidence.INTRODUCED
    assert shown.reason == "the base has no name 'fee' in payments, which the change adds"


def test_judged_without_the_diff_the_runs_prove_no_more_than_their_exit_codes_allow() -> None:
    """A verifier judges without the diff; the debate judges again, and only ever to prove
    the finding in new code."""
    head, base = ran("pytest_discount_assertion"), ran("pytest_name_not_collected")
    unjudged = Verification.of("tests/test_discounted.py", "cmd", head, base)

    assert unjudged.verdict is Evidence.BROKEN
    assert unjudged.base_output_tail == recorded("pytest_name_not_collected")
    assert unjudged.judged(CHANGE.additions()).verdict is Evidence.INTRODUCED
    reproduced = Verification.of("tests/test_total.py", "cmd", ran("pytest_assertion"), Run())
    assert reproduced.judged(CHANGE.additions()) == reproduced


@pytest.mark.parametrize(
    ("run", "verified"),
    [
        (Run(exit_code=0), True),
        (Run(exit_code=1), False),
        (Run(exit_code=2, output_tail="SyntaxError: invalid syntax"), False),
        (Run(error="timed out after 60 s"), None),
        (Run(error="the review's 20 test runs are spent"), None),
    ],
)
def test_a_patch_that_leaves_its_test_not_passing_is_no_fix(
    run: Run, verified: bool | None
) -> None:
    assert FixCheck.of("tests/test_total.py", run).verified is verified


JS_CHANGE = Diff.parse(
    git_diff(
        {
            "src/prices.js": (
                "function total(prices) {\n  return 0;\n}\n",
                "function total(prices) {\n  return 0;\n}\n\n"
                "function discounted(prices, off) {\n  return 0;\n}\n",
            ),
            "src/coupons.js": (None, "function coupon(code) {\n  return 0.5;\n}\n"),
        }
    )
)
"""The change that adds `discounted` to src/prices.js and creates src/coupons.js."""
JS_EXITS = {"jest": 1, "vitest": 1, "mocha": 1}


def js_ran(name: str) -> Run:
    return Run(exit_code=JS_EXITS[name.split("_")[0]], output_tail=recorded(name), seconds=1.0)


@pytest.mark.parametrize("runner", ["jest", "vitest", "mocha"])
@pytest.mark.parametrize(
    ("base", "reason"),
    [
        ("not_a_function", "the base has no name 'discounted', which the change adds"),
        ("no_module", "the base has no module 'src/coupons', which the change adds"),
    ],
)
def test_a_js_runner_s_base_lacking_what_the_change_adds_proves_new_code(
    runner: str, base: str, reason: str
) -> None:
    test = f"test/{base}.test.js"
    at_head = js_ran(f"{runner}_assertion").model_copy(
        update={"output_tail": recorded(f"{runner}_assertion").replace("assertion.test", base)}
    )

    shown = Verification.of(test, "cmd {test}", at_head, js_ran(f"{runner}_{base}"))

    judged_ = shown.judged(JS_CHANGE.additions())
    assert (judged_.verdict, judged_.reason) == (Evidence.INTRODUCED, reason)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("jest_no_tests", "at the head the test file defines no test"),
        ("vitest_no_tests", "at the head the test file defines no test"),
        ("mocha_no_tests", "at the head no tests ran"),  # mocha passes it: exit 0
        ("jest_syntax", "at the head the test could not be loaded (SyntaxError: "),
    ],
)
def test_a_js_runner_that_ran_no_test_proves_nothing(name: str, why: str) -> None:
    head = js_ran(name)
    if name.startswith("mocha"):
        head = head.model_copy(update={"exit_code": 0})

    shown = Verification.of(f"test/{name.split('_', 1)[1]}.test.js", "cmd {test}", head, None)

    assert shown.verdict is Evidence.BROKEN
    assert shown.reason.startswith(why)


@pytest.mark.parametrize(
    ("test", "head", "retest", "reason"),
    [
        ("tests/test_total.py", "pytest_assertion", Retest.FAILS, "it still fails at the head"),
        ("fee.py", "script_assertion", Retest.FAILS, "it still fails at the head"),
        ("tests/test_total.py", "pytest_passing", Retest.PASSES, "it passes at the head"),
        (
            "tests/test_discounted.py",
            "pytest_name_not_collected",
            Retest.NOT_RUN,
            "at the head the test could not be loaded (ImportError at line 1: cannot import name "
            "'discounted' from 'shop.cart' (/work/shop/shop/cart.py))",
        ),
        ("tests/test_u_total.py", "unittest_no_tests", Retest.NOT_RUN, "at the head no tests ran"),
        ("tests/test_count.py", "pytest_skipped", Retest.NOT_RUN, SKIPPED_AT_HEAD),
        ("tests/test_u_count.py", "unittest_skipped", Retest.NOT_RUN, SKIPPED_AT_HEAD),
    ],
)
def test_a_proven_findings_test_run_again_at_a_later_head_is_judged_by_the_head_alone(
    test: str, head: str, retest: Retest, reason: str
) -> None:
    """The base passed when the test proved the finding; again at a later head, a test that
    fails there keeps the finding, one that passes shows it fixed, and one that did not run as
    a test there (its file gone from the head, a runner that ran nothing or skipped it, exiting
    0) shows nothing."""
    at_head = (
        Run(exit_code=0, output_tail=PASSES["pytest"]) if head == "pytest_passing" else ran(head)
    )
    shown = Verification.of(test, "cmd", at_head, Run(exit_code=0, output_tail=PASSES["pytest"]))

    assert shown.retested() == (retest, reason)


def test_a_followed_test_the_environment_could_not_run_shows_nothing() -> None:
    unfit = Verification.unfit("tests/test_total.py", "No module named pytest")

    assert unfit.retested() == (
        Retest.NOT_RUN,
        "the project's environment cannot run its tests: No module named pytest",
    )


@pytest.mark.parametrize(
    ("test", "head", "base"),
    [
        ("tests/test_count.py", "pytest_count_assertion", "pytest_skipped"),
        ("tests/test_coupons.py", "pytest_count_assertion", "pytest_module_skipped"),
        ("tests/test_u_count.py", "unittest_count_assertion", "unittest_skipped"),
    ],
)
def test_a_test_the_base_skips_shows_no_regression(test: str, head: str, base: str) -> None:
    """A test that skips itself where the code it tests is not there (`skipif(not
    hasattr(cart, "count"))`, `pytest.importorskip`, `skipUnless`) exits 0 at the base: it
    did not pass there, it did not run, and nothing binds the change — not even knowing the
    change adds what it skipped for."""
    shown = judged(test, head, base, COUNT_CHANGE)

    assert (shown.verdict, shown.reason) == (
        Evidence.BROKEN,
        f"it fails at the head, but at the base {SKIPPED}: no regression shown",
    )


@pytest.mark.parametrize(
    ("name", "test", "counted"),
    [
        ("pytest_skipped", "tests/test_count.py", "1 skipped"),
        ("unittest_skipped", "tests/test_u_count.py", "1 skipped"),
        ("go_skipped", "shop/count_test.go", "1 skipped"),
        ("node_spec_skipped", "test/skipped.test.js", "1 skipped"),
        ("jest_skipped", "test/skipped.test.js", "1 skipped"),
        ("vitest_skipped", "test/skipped.test.js", "1 skipped"),
        ("mocha_skipped", "test/skipped.test.js", "1 pending"),
    ],
)
def test_a_test_skipped_at_the_head_does_not_withdraw_its_finding(
    name: str, test: str, counted: str
) -> None:
    """Each runner exits 0 having skipped the test: it did not pass at the head, it did not
    run there."""
    head = Run(exit_code=0, output_tail=recorded(name), seconds=1.0)

    shown = Verification.of(test, "cmd {test}", head, None)

    assert (shown.verdict, shown.reason) == (
        Evidence.BROKEN,
        f"at the head the test was skipped ({counted})",
    )


@pytest.mark.parametrize(
    ("test", "name"),
    [("tests/test_count.py", "pytest_skipped"), ("tests/test_u_count.py", "unittest_skipped")],
)
def test_a_patch_whose_test_is_skipped_with_it_is_not_checked(test: str, name: str) -> None:
    checked = FixCheck.of(test, ran(name))

    assert (checked.verified, checked.reason) == (None, f"with the patch {SKIPPED}")


@pytest.mark.parametrize(
    ("test", "name"),
    [("tests/test_count.py", "pytest_skipped"), ("tests/test_u_count.py", "unittest_skipped")],
)
def test_a_pull_requests_own_test_skipped_at_the_head_did_not_run(test: str, name: str) -> None:
    """A skipped test cited as evidence of intent is no test that passes there."""
    own = OwnTestRun.of(test, ran(name))

    assert (own.passed, own.reason) == (None, f"it did not run at the head: {SKIPPED}")
