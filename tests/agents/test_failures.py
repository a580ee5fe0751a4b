"""How a test failed, read from what its runner printed: pytest's, unittest's, a bare
script's, `go test`'s and `node --test`'s real output (`tests/fixtures/test_output/`, recorded
from a small shop project: pytest 9 with its plugins off, Python 3.11; Go 1.19; Node 20, its
TAP and spec reporters), each failure's exception, message, test line, stage and what it says
is missing, and why no test ran when none did."""

from pathlib import Path

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
