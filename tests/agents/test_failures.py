"""How a test failed, read from what its runner printed: pytest's, unittest's, a bare
script's, `go test`'s and `node --test`'s real output (`tests/fixtures/test_output/`, recorded
from a small shop project: pytest 9 with its plugins off, Python 3.11; Go 1.19; Node 20, its
TAP and spec reporters), each failure's exception, message, test line, stage and what it says
is missing, and why no test ran when none did."""

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agents.failures.failure import Absence, Failure, Missing, OutputReading, Stage
from agents.failures.reading import read_output

OUTPUTS = Path(__file__).resolve().parent.parent / "fixtures" / "test_output"


def recorded(name: str) -> str:
    return (OUTPUTS / f"{name}.txt").read_text()


NAME_IN_CART = Missing(Absence.NAME, "discounted", "shop.cart")
RUNNER_GONE = "the test's runner is not installed where it runs"

READINGS = {
    "pytest_assertion": (
        "tests/test_total.py",
        OutputReading("pytest", (Failure("AssertionError", "assert 7 == 12", 5),)),
    ),
    "pytest_discount_assertion": (
        "tests/test_discounted.py",
        OutputReading("pytest", (Failure("AssertionError", "assert 360 == 90", 5),)),
    ),
    "pytest_name_not_collected": (
        "tests/test_discounted.py",
        OutputReading(
            "pytest",
            (
                Failure(
                    "ImportError",
                    "cannot import name 'discounted' from 'shop.cart' (/work/shop/shop/cart.py)",
                    1,
                    Stage.LOADING,
                    NAME_IN_CART,
                ),
            ),
        ),
    ),
    "pytest_module_not_collected": (
        "tests/test_coupons.py",
        OutputReading(
            "pytest",
            (
                Failure(
                    "ModuleNotFoundError",
                    "No module named 'shop.coupons'",
                    1,
                    Stage.LOADING,
                    Missing(Absence.MODULE, "shop.coupons"),
                ),
            ),
        ),
    ),
    "pytest_attribute": (
        "tests/test_attribute.py",
        OutputReading(
            "pytest",
            (
                Failure(
                    "AttributeError",
                    "module 'shop.cart' has no attribute 'discounted'",
                    5,
                    missing=NAME_IN_CART,
                ),
            ),
        ),
    ),
    "pytest_type_error": (
        "tests/test_floats.py",
        OutputReading(
            "pytest",
            (Failure("TypeError", "unsupported operand type(s) for +=: 'int' and 'NoneType'", 5),),
        ),
    ),
    "pytest_syntax_error": (
        "tests/test_syntax.py",
        OutputReading("pytest", (Failure("SyntaxError", "invalid syntax", 1, Stage.LOADING),)),
    ),
    "pytest_no_tests": ("tests/test_nothing.py", OutputReading("pytest", (), "no tests ran")),
    "pytest_missing": (
        "tests/test_total.py",
        OutputReading("python", (), f"No module named pytest: {RUNNER_GONE}"),
    ),
    "pytest_no_numpy": (
        "tests/test_numpy.py",
        OutputReading(
            "pytest",
            (
                Failure(
                    "ModuleNotFoundError",
                    "No module named 'numpy'",
                    2,
                    missing=Missing(Absence.MODULE, "numpy"),
                ),
            ),
        ),
    ),
    "unittest_assertion": (
        "tests/test_u_total.py",
        OutputReading("unittest", (Failure("AssertionError", "7 != 12", 8),)),
    ),
    "unittest_discount_assertion": (
        "tests/test_u_discounted.py",
        OutputReading("unittest", (Failure("AssertionError", "360 != 90", 8),)),
    ),
    "unittest_name_not_loaded": (
        "tests/test_u_discounted.py",
        OutputReading(
            "unittest",
            (
                Failure(
                    "ImportError",
                    "cannot import name 'discounted' from 'shop.cart' (/work/shop/shop/cart.py)",
                    3,
                    Stage.LOADING,
                    NAME_IN_CART,
                ),
            ),
        ),
    ),
    "unittest_attribute": (
        "tests/test_u_attribute.py",
        OutputReading(
            "unittest",
            (
                Failure(
                    "AttributeError",
                    "module 'shop.cart' has no attribute 'discounted'",
                    8,
                    missing=NAME_IN_CART,
                ),
            ),
        ),
    ),
    "unittest_no_tests": ("tests/test_nothing.py", OutputReading("unittest", (), "no tests ran")),
    "unittest_without_pytest": (
        "tests/test_u_pytest.py",
        OutputReading(
            "unittest",
            (
                Failure(
                    "ModuleNotFoundError",
                    "No module named 'pytest'",
                    1,
                    Stage.LOADING,
                    Missing(Absence.MODULE, "pytest"),
                ),
            ),
            f"No module named 'pytest': {RUNNER_GONE}",
        ),
    ),
    "script_assertion": ("fee.py", OutputReading("python", (Failure("AssertionError", "300", 7),))),
    "script_attribute": (
        "fee.py",
        OutputReading(
            "python",
            (
                Failure(
                    "AttributeError",
                    "module 'payments' has no attribute 'fee'",
                    7,
                    missing=Missing(Absence.NAME, "fee", "payments"),
                ),
            ),
        ),
    ),
}


GO_READINGS = {
    "go_assertion": (
        "shop/cart_test.go",
        OutputReading("go test", (Failure("test failed", "Total = 7, want 12", 7),)),
    ),
    "go_panic": (
        "shop/index_test.go",
        OutputReading(
            "go test", (Failure("panic", "runtime error: index out of range [0] with length 0", 7),)
        ),
    ),
    "go_undefined": (
        "shop/discounted_test.go",
        OutputReading(
            "go test",
            (
                Failure(
                    "build error",
                    "undefined: Discounted",
                    6,
                    Stage.LOADING,
                    Missing(Absence.NAME, "Discounted"),
                ),
            ),
        ),
    ),
    "go_no_package": (
        "shop/coupons_test.go",
        OutputReading(
            "go test",
            (
                Failure(
                    "build error",
                    "no required module provides package example.com/shop/coupons; to add it:",
                    6,
                    Stage.LOADING,
                    Missing(Absence.MODULE, "example.com/shop/coupons"),
                ),
            ),
        ),
    ),
    "go_no_test_files": (
        "other/other_test.go",
        OutputReading("go test", (), "the package has no test files"),
    ),
}
STRICTLY_EQUAL = Failure("AssertionError", "Expected values to be strictly equal:", 6)
NO_COUPONS = Failure(
    "Error",
    "Cannot find module '../src/coupons'",
    3,
    Stage.LOADING,
    Missing(Absence.MODULE, "src/coupons"),  # the module's path in the repository
)
NODE_READINGS = {
    "node_assertion": ("test/total.test.js", OutputReading("node --test", (STRICTLY_EQUAL,))),
    "node_spec_assertion": ("test/total.test.js", OutputReading("node --test", (STRICTLY_EQUAL,))),
    "node_not_a_function": (
        "test/discounted.test.js",
        OutputReading(
            "node --test",
            (
                Failure(
                    "TypeError",
                    "discounted is not a function",
                    6,
                    missing=Missing(Absence.NAME, "discounted"),
                ),
            ),
        ),
    ),
    "node_no_module": ("test/coupons.test.js", OutputReading("node --test", (NO_COUPONS,))),
    "node_spec_no_module": ("test/coupons.test.js", OutputReading("node --test", (NO_COUPONS,))),
    "node_no_export": (
        "test/discounted.test.mjs",
        OutputReading(
            "node --test",
            (
                Failure(
                    "SyntaxError",
                    "The requested module '../src/cart.mjs' does not provide an export named "
                    "'discounted'",
                    None,
                    Stage.LOADING,
                    Missing(Absence.NAME, "discounted", "src/cart"),
                ),
            ),
        ),
    ),
    "node_no_tests": (
        "test/empty.test.js",
        OutputReading("node --test", (), "the test file defines no test"),
    ),
}


@pytest.mark.parametrize(
    ("name", "test", "reading"),
    [(n, *r) for n, r in {**READINGS, **GO_READINGS, **NODE_READINGS}.items()],
)
def test_a_runner_s_output_reads_as_its_failures(
    name: str, test: str, reading: OutputReading
) -> None:
    assert read_output(recorded(name), test) == reading


def test_a_failure_is_the_same_at_the_same_line_whatever_the_values_compared() -> None:
    at_base = read_output(recorded("pytest_discount_assertion"), "tests/test_discounted.py")
    at_head = read_output(
        recorded("pytest_discount_assertion").replace("360", "900"), "tests/test_discounted.py"
    )
    elsewhere = read_output(
        recorded("pytest_discount_assertion").replace("test_discounted.py:5:", "x.py:5:"),
        "tests/test_discounted.py",
    )

    assert at_head.same_as(at_base)
    assert not elsewhere.same_as(at_base)  # its line in the test is not known there


def test_colours_are_read_through() -> None:
    coloured = recorded("pytest_assertion").replace(
        "AssertionError", "\x1b[31mAssertionError\x1b[0m"
    )

    assert read_output(coloured, "tests/test_total.py") == READINGS["pytest_assertion"][1]


def test_pytest_s_summary_is_read_when_its_sections_are_cut_off() -> None:
    """The tail kept of a long run may hold only the end: the summary's lines, whose message
    pytest cuts at the terminal's width — a name cut there is no missing name."""
    summary = (
        "FAILED tests/test_total.py::test_total - assert 7 == 12\n"
        "FAILED tests/test_x.py::test_y - AttributeError: module 'shop.cart' has no attribute"
        " 'disc...\n2 failed in 0.05s\n"
    )

    reading = read_output(summary, "tests/test_total.py")

    assert reading.failures == (
        Failure("AssertionError", "assert 7 == 12"),
        Failure("AttributeError", "module 'shop.cart' has no attribute 'disc"),
    )


@pytest.mark.parametrize(
    "output",
    [
        "",
        "ok\n",
        "Traceback (most recent call last):\n",
        "===== FAILURES =====\n___ t ___\nE\n",
        "x" * 200_000,
        "Ran 3 tests in 0.1s\n" + "=" * 70 + "\n",
    ],
)
def test_output_nothing_recognises_or_that_says_nothing_reads_as_no_failure(output: str) -> None:
    assert not any(f.missing for f in read_output(output, "tests/test_x.py").failures)


NOT_A_FUNCTION = Failure(
    "TypeError", "discounted is not a function", None, missing=Missing(Absence.NAME, "discounted")
)
NO_PRICES_EXPORT = "The requested module '../src/prices.mjs' does not provide an export named "
JS_RUNNER_READINGS = {
    # name: (test, exception, message, line, stage, missing), or (test, problem)
    "jest_assertion": ("test/assertion.test.js", "expect.toBe", "Expected: 7; Received: 6", 4),
    "jest_not_a_function": ("test/not_a_function.test.js", NOT_A_FUNCTION, 4),
    "jest_no_module": (
        "test/no_module.test.js",
        "",
        "Cannot find module '../src/coupons' from 'test/no_module.test.js'",
        1,
        Stage.LOADING,
        Missing(Absence.MODULE, "src/coupons"),
    ),
    "jest_syntax": (
        "test/syntax.test.js",
        "SyntaxError",
        '/tmp/noderunners/jest/test/syntax.test.js: Unexpected token, expected "," (4:33)',
        None,
        Stage.LOADING,
    ),
    "jest_no_tests": ("test/no_tests.test.js", "the test file defines no test"),
    "jest_no_files": ("test/nothing_here.test.js", "no tests ran"),
    "vitest_assertion": (
        "test/assertion.test.js",
        "AssertionError",
        "expected 6 to be 7 // Object.is equality",
        5,
    ),
    "vitest_not_a_function": ("test/not_a_function.test.js", NOT_A_FUNCTION, 5),
    "vitest_no_module": (
        "test/no_module.test.js",
        "Error",
        "Cannot find module '../src/coupons.mjs' imported from "
        "/tmp/noderunners/vitest/test/no_module.test.js",
        2,
        Stage.LOADING,
        Missing(Absence.MODULE, "src/coupons"),
    ),
    "vitest_no_tests": ("test/no_tests.test.js", "the test file defines no test"),
    "vitest_no_files": ("test/nothing_here.test.js", "no tests ran"),
    "mocha_assertion": (
        "test/assertion.test.js",
        "AssertionError",
        "Expected values to be strictly equal:",
        6,
    ),
    "mocha_not_a_function": ("test/not_a_function.test.js", NOT_A_FUNCTION, 6),
    "mocha_no_module": (
        "test/no_module.test.js",
        "Error",
        "Cannot find module '../src/coupons'",
        2,
        Stage.LOADING,
        Missing(Absence.MODULE, "src/coupons"),
    ),
    "mocha_no_export": (
        "test/no_export.test.mjs",
        "SyntaxError",
        NO_PRICES_EXPORT + "'discounted'",
        2,
        Stage.LOADING,
        Missing(Absence.NAME, "discounted", "src/prices"),
    ),
    "mocha_syntax": (
        "test/syntax.test.js",
        "SyntaxError",
        "missing ) after argument list",
        6,
        Stage.LOADING,
    ),
    "mocha_no_tests": ("test/no_tests.test.js", "no tests ran"),
    "mocha_no_files": ("test/nothing_here.test.js", "no tests ran"),
}


def js_reading(name: str, *shown: Any) -> OutputReading:
    """What a row of JS_RUNNER_READINGS says the run reads as."""
    runner = name.split("_")[0]
    if len(shown) == 1:
        return OutputReading(runner, (), shown[0])
    if isinstance(shown[0], Failure):
        return OutputReading(runner, (replace(shown[0], line=shown[1]),))
    return OutputReading(runner, (Failure(*shown),))


@pytest.mark.parametrize(("name", "recorded_run"), JS_RUNNER_READINGS.items())
def test_a_jest_vitest_or_mocha_run_reads_as_its_failures(
    name: str, recorded_run: tuple[object, ...]
) -> None:
    """Recorded with jest 30.5.2, vitest 4.1.12 and mocha 12.0.3 on Node 20 (see the
    fixtures' NODE_RUNNERS.md)."""
    test, *shown = recorded_run
    assert isinstance(test, str)

    assert read_output(recorded(name), test) == js_reading(name, *shown)


@pytest.mark.parametrize("name", ["jest_passing", "vitest_passing", "mocha_passing"])
def test_a_passing_jest_vitest_or_mocha_run_reads_as_no_failure(name: str) -> None:
    reading = read_output(recorded(name), "test/passing.test.js")

    assert reading == OutputReading(name.split("_")[0])


SKIPPED_RUNS = {
    # name: (test, runner, what its totals count)
    "pytest_skipped": ("tests/test_count.py", "pytest", "1 skipped"),
    "pytest_module_skipped": ("tests/test_coupons.py", "pytest", "1 skipped"),
    "unittest_skipped": ("tests/test_u_count.py", "unittest", "1 skipped"),
    "go_skipped": ("shop/count_test.go", "go test", "1 skipped"),
    "node_skipped": ("test/skipped.test.js", "node --test", "1 skipped"),
    "node_spec_skipped": ("test/skipped.test.js", "node --test", "1 skipped"),
    "jest_skipped": ("test/skipped.test.js", "jest", "1 skipped"),
    "vitest_skipped": ("test/skipped.test.js", "vitest", "1 skipped"),
    "mocha_skipped": ("test/skipped.test.js", "mocha", "1 pending"),
}


@pytest.mark.parametrize(
    ("name", "test", "runner", "counted"), [(n, *r) for n, r in SKIPPED_RUNS.items()]
)
def test_a_run_that_skipped_its_test_reads_as_no_test_run(
    name: str, test: str, runner: str, counted: str
) -> None:
    """Each runner skips a test that skips itself where the code it tests is not there
    (`skipif(not hasattr(cart, "count"))`, `pytest.importorskip`, `t.Skip`, `test.skip`,
    `this.skip()`), and all but pytest's skip at a module's top (5) exit 0, as if it passed:
    only their totals tell that nothing ran."""
    assert read_output(recorded(name), test) == OutputReading(
        runner, (), f"the test was skipped ({counted})"
    )


RULE = "-" * 70
PASSED_BESIDE_A_SKIP = {
    "pytest": ".s                                   [100%]\n1 passed, 1 skipped in 0.04s\n",
    "unittest": f"s.\n{RULE}\nRan 2 tests in 0.000s\n\nOK (skipped=1)\n",
    "go test": (
        "=== RUN   TestTotal\n--- PASS: TestTotal (0.00s)\n=== RUN   TestCount\n"
        "    count_test.go:7: Count is not there yet\n--- SKIP: TestCount (0.00s)\nPASS\n"
        "ok  \texample.com/shop/shop\t0.004s\n"
    ),
    "node --test": "# tests 2\n# suites 0\n# pass 1\n# fail 0\n# cancelled 0\n# skipped 1\n",
    "jest": "Test Suites: 1 passed, 1 total\nTests:       1 skipped, 1 passed, 2 total\n",
    "vitest": " Test Files  1 passed (1)\n      Tests  1 passed | 1 skipped (2)\n",
    "mocha": "  total\n    ✔ counts every price\n\n\n  1 passing (2ms)\n  1 pending\n",
}


@pytest.mark.parametrize(("runner", "output"), PASSED_BESIDE_A_SKIP.items())
def test_a_run_that_passed_a_test_beside_one_it_skipped_ran(runner: str, output: str) -> None:
    assert read_output(output, "tests/test_count.py") == OutputReading(runner)


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ("x                                   [100%]\n1 xfailed in 0.05s\n", "1 xfailed"),
        ("\n1 deselected in 0.01s\n", "1 deselected"),
        (f"x\n{RULE}\nRan 1 test in 0.000s\n\nOK (expected failures=1)\n", "1 expected to fail"),
    ],
)
def test_a_run_whose_every_test_was_set_aside_ran_none(output: str, problem: str) -> None:
    """A test expected to fail (`xfail`, `expectedFailure`) passes when it fails, and one
    deselected does not run: neither passed as a test."""
    reading = read_output(output, "tests/test_count.py")

    assert reading.problem == f"no test passed or failed ({problem})"
