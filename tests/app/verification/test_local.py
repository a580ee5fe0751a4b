"""The verifier of one review on a real project with a real off-by-one: real git, real
pytest, in bubblewrap's real sandbox."""

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from agents.protocol import Patch
from agents.verification import Evidence
from app.verification.local import LocalVerifier
from app.verification.sandbox import Bwrap
from app.verification.unsandboxed import Unsandboxed
from tests.app.verification.conftest import needs_bwrap
from tests.kits.project import existing, snapshot
from tests.scenarios.shop import FIX, REPRODUCTION, WRONG_FIX, Project, config, reproduction

pytestmark = needs_bwrap

SYNTAX_ERROR = reproduction("tests/test_broken.py", "def test_it(:\n    pass\n")
PASSES = reproduction(
    "tests/test_empty.py",
    "from shop.cart import total\n\n\ndef test_it():\n    assert total([]) == 0\n",
)
OLDER_BUG = reproduction(
    "tests/test_floats.py",
    "from shop.cart import total\n\n\ndef test_it():\n    assert total([0.1, 0.2]) == 0.3\n",
)


@pytest.mark.parametrize("from_ref", [False, True], ids=["diff-reversed", "base-ref"])
async def test_a_reproduction_of_the_bug_is_proof_and_checks_the_coders_patches(
    sandbox: Bwrap, project: Project, from_ref: bool
) -> None:
    base_ref = project.base if from_ref else None
    async with LocalVerifier(
        project.checkout, project.diff, config(), sandbox, base_ref=base_ref
    ) as verifier:
        shown = await verifier.reproduce(REPRODUCTION)
        fixed = await verifier.check_fix(REPRODUCTION, [FIX])
        not_fixed = await verifier.check_fix(REPRODUCTION, [WRONG_FIX])

    assert shown.verdict is Evidence.REPRODUCED, shown
    assert shown.command == (
        "python -m pytest -q -p no:cacheprovider tests/test_total_counts_every_price.py"
    )
    assert shown.exit_code == 1
    assert shown.base_exit_code == 0
    assert "assert 7 == 12" in shown.output_tail
    assert fixed.verified is True, fixed
    assert not_fixed.verified is False, not_fixed
    assert "assert 5 == 12" not in not_fixed.output_tail
    assert "assert 0 == 12" in not_fixed.output_tail


async def test_what_the_runs_show_of_other_tests(sandbox: Bwrap, project: Project) -> None:
    async with LocalVerifier(project.checkout, project.diff, config(), sandbox) as verifier:
        passes, broken, older = await asyncio.gather(
            verifier.reproduce(PASSES),
            verifier.reproduce(SYNTAX_ERROR),
            verifier.reproduce(OLDER_BUG),
        )

    assert passes.verdict is Evidence.NOT_REPRODUCED, passes
    assert passes.base_exit_code is None
    assert broken.verdict is Evidence.BROKEN, broken
    assert broken.reason == (
        "at the head the test could not be loaded (SyntaxError at line 1: invalid syntax)"
    )
    assert "SyntaxError" in broken.output_tail
    assert older.verdict is Evidence.FAILS_AT_BASE, older
    assert older.base_exit_code == 1


SKIPPED_WITHOUT_CENTS = reproduction(
    "tests/test_total_in_cents.py",
    "import pytest\n\nfrom shop import cart\n\n\n"
    "@pytest.mark.skipif('in cents' not in cart.total.__doc__, reason='not in cents')\n"
    "def test_total():\n    assert cart.total([5, 7]) == 12\n",
)
"""Skips itself where `total` does not say it counts in cents: at the base."""
BACK_TO_THE_BASE_DOCSTRING = Patch(
    path="shop/cart.py", start_line=5, end_line=5, replacement='    """The sum of the prices."""'
)


async def test_a_test_skipped_at_the_base_or_with_a_patch_shows_nothing(
    sandbox: Bwrap, project: Project
) -> None:
    """pytest exits 0 having skipped the test: that is no pass, at the base nor with a
    patch."""
    async with LocalVerifier(project.checkout, project.diff, config(), sandbox) as verifier:
        shown = await verifier.reproduce(SKIPPED_WITHOUT_CENTS)
        fix = await verifier.check_fix(SKIPPED_WITHOUT_CENTS, [BACK_TO_THE_BASE_DOCSTRING])

    assert (shown.exit_code, shown.base_exit_code) == (1, 0)
    assert shown.verdict is Evidence.BROKEN, shown
    assert shown.reason == (
        "it fails at the head, but at the base the test was skipped (1 skipped): "
        "no regression shown"
    )
    assert (fix.exit_code, fix.verified) == (0, None)
    assert fix.reason == "with the patch the test was skipped (1 skipped)"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("tests/conftest.py", "would change how the project's other tests run"),
        ("../x.py", "is not a plain relative path inside the repository"),
        ("/tmp/x.py", "is not a plain relative path inside the repository"),
        ("tests/test_cart.py", "tests/test_cart.py exists already"),
        ("outside/test_x.py", "outside/test_x.py goes through a symlink: outside"),
        ("shop/cart.py/test_x.py", "goes through shop/cart.py, not a directory"),
    ],
)
async def test_a_reproduction_where_it_may_not_be_written_is_broken_and_writes_nothing(
    sandbox: Bwrap, project: Project, tmp_path: Path, path: str, reason: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project.checkout / "outside").symlink_to(outside)
    before = snapshot(tmp_path)
    refused = reproduction(path, "def test_it():\n    assert False\n")

    async with LocalVerifier(project.checkout, project.diff, config(), sandbox) as verifier:
        shown = await verifier.reproduce(refused)
        fix = await verifier.check_fix(refused, [FIX])

    assert shown.verdict is Evidence.BROKEN
    assert reason in shown.reason
    assert fix.verified is None
    assert reason in fix.reason
    assert snapshot(tmp_path) == before
    assert existing(Path("/tmp/x.py")) == []


async def test_the_setup_runs_once_in_each_tree_and_its_failure_breaks_every_run(
    sandbox: Bwrap, project: Project
) -> None:
    builds = "python -c \"open('shop/built.py', 'w').write('PRICES = [5, 7]')\""
    uses_the_build = reproduction(
        "tests/test_built.py",
        "from shop.built import PRICES\nfrom shop.cart import total\n\n\n"
        "def test_it():\n    assert total(PRICES) == 12\n",
    )
    async with LocalVerifier(
        project.checkout, project.diff, config(setup=builds), sandbox
    ) as verifier:
        built = await verifier.reproduce(uses_the_build)
    async with LocalVerifier(
        project.checkout, project.diff, config(setup="echo no compiler here; exit 3"), sandbox
    ) as verifier:
        failed = await verifier.reproduce(REPRODUCTION)
        fix = await verifier.check_fix(REPRODUCTION, [FIX])

    assert built.verdict is Evidence.REPRODUCED, built
    assert not (project.checkout / "shop" / "built.py").exists()
    assert failed.verdict is Evidence.BROKEN
    assert failed.reason == "at the head setup failed: it exited with 3: no compiler here"
    assert fix.reason == "with the patch setup failed: it exited with 3: no compiler here"


async def test_past_the_reviews_runs_no_test_runs(sandbox: Bwrap, project: Project) -> None:
    async with LocalVerifier(
        project.checkout, project.diff, config(max_runs=1), sandbox
    ) as verifier:
        first = await verifier.reproduce(REPRODUCTION)
        second = await verifier.reproduce(PASSES)
        fix = await verifier.check_fix(REPRODUCTION, [FIX])

    assert first.verdict is Evidence.REPRODUCED
    assert second.verdict is Evidence.NOT_RUN
    assert second.reason == "the review's 1 test runs are spent"
    assert fix.verified is None
    assert fix.reason == "the review's 1 test runs are spent"


async def test_a_run_sees_its_copy_where_the_checkout_is_and_the_environment_read_only(
    sandbox: Bwrap, project: Project
) -> None:
    looks_around = reproduction(
        "tests/test_environment.py",
        "import os, pathlib, subprocess\n\n\n"
        "def test_it():\n"
        f"    checkout = pathlib.Path({str(project.checkout)!r})\n"
        "    assert pathlib.Path.cwd() == checkout\n"
        "    assert (checkout / 'tests' / 'test_environment.py').is_file()\n"
        "    (checkout / 'planted').write_text('in the copy')\n"
        "    assert pathlib.Path('.venv/pyvenv.cfg').is_file()\n"
        "    try:\n"
        "        pathlib.Path('.venv/planted').write_text('x')\n"
        "    except OSError:\n"
        "        pass\n"
        "    else:\n"
        "        raise AssertionError('the environment is writable')\n"
        "    prefix = subprocess.run(\n"
        "        ['python', '-c', 'import sys; print(sys.prefix)'],\n"
        "        capture_output=True, text=True, check=True,\n"
        "    ).stdout\n"
        "    assert prefix.strip() == str(checkout / '.venv')\n",
    )
    async with LocalVerifier(project.checkout, project.diff, config(), sandbox) as verifier:
        shown = await verifier.reproduce(looks_around)

    assert shown.verdict is Evidence.NOT_REPRODUCED, shown
    checkout = project.checkout
    planted = [checkout / "planted", checkout / ".venv" / "planted"]
    assert existing(*planted, checkout / "tests" / "test_environment.py") == []


async def test_past_the_reviews_seconds_no_test_runs_and_the_last_is_cut_short(
    sandbox: Bwrap, project: Project
) -> None:
    sleeps = reproduction(
        "tests/test_sleeps.py", "import time\n\n\ndef test_it():\n    time.sleep(60)\n"
    )
    async with LocalVerifier(
        project.checkout, project.diff, config(max_seconds=1), sandbox
    ) as verifier:
        first = await verifier.reproduce(sleeps)
        second = await verifier.reproduce(REPRODUCTION)

    assert first.verdict is Evidence.BROKEN
    assert first.reason == "at the head timed out after 1 s"
    assert second.verdict is Evidence.NOT_RUN
    assert second.reason == "the review's 1 s of test runs are spent"


async def test_without_a_sandbox_the_runs_show_the_same(project: Project) -> None:
    async with LocalVerifier(project.checkout, project.diff, config(), Unsandboxed()) as verifier:
        shown = await verifier.reproduce(REPRODUCTION)
        fixed = await verifier.check_fix(REPRODUCTION, [FIX])

    assert shown.verdict is Evidence.REPRODUCED, shown
    assert fixed.verified is True, fixed


async def test_a_project_deeper_than_python_recurses_is_copied_and_tested(
    sandbox: Bwrap, project: Project
) -> None:
    """Slow: deeper than Python recurses is over 1,000 directories, made, copied into the
    sandbox and removed one level at a time."""
    bottom = Path(*["d"] * 1_200, "x")
    await asyncio.to_thread(make_deep, project.checkout, 1_200)
    reaches_the_bottom = reproduction(
        "tests/test_deep.py",
        f"import pathlib\n\n\ndef test_it():\n    assert pathlib.Path({str(bottom)!r}).is_file()\n",
    )

    try:
        async with LocalVerifier(project.checkout, project.diff, config(), sandbox) as verifier:
            shown = await verifier.reproduce(reaches_the_bottom)
    finally:
        # pytest's own clean-up recurses, and would fail on the deep tree.
        await asyncio.to_thread(subprocess.run, ["rm", "-rf", str(project.checkout / "d")])

    assert shown.verdict is Evidence.NOT_REPRODUCED, shown


def make_deep(top: Path, depth: int) -> None:
    """`depth` nested directories under `top`, a file at the bottom, made one at a time."""
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        Path("x").write_text("the bottom\n")
    finally:
        os.chdir(here)
