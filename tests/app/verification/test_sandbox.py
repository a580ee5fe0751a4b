"""One command in bubblewrap's sandbox, for real: what it may not see, reach or outgrow, and
that it is stopped whole; the same bounds, where they apply, without a sandbox."""

import ast
import os
import secrets
import shlex
import socket
import sys
from pathlib import Path

import pytest

from app.verification.environments import ProjectPython
from app.verification.mounts import ETC, SYSTEM
from app.verification.process import TAIL_CHARS, TAIL_LINES
from app.verification.runner import SYSTEM_PATH, Limits, Place, Runner
from app.verification.sandbox import Bwrap, SandboxUnavailable, sandbox_problem, sandboxed
from app.verification.unsandboxed import Unsandboxed
from tests.app.verification.conftest import needs_bwrap
from tests.kits.project import existing, place, processes_running, snapshot, work_for

TIEBREAK = Path(__file__).resolve().parents[3]
"""Tiebreak's own checkout."""
SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-the-sandbox-test",
    "GITHUB_PRIVATE_KEY": "-----BEGIN FAKE KEY-----",
    "AWS_SECRET_ACCESS_KEY": "fake-aws-secret-for-the-sandbox-test",
}


def python(code: str, *args: str) -> str:
    return shlex.join(["python", "-c", code, *args])


def test_where_bubblewrap_is_missing_the_problem_says_how_to_install_it() -> None:
    problem = sandbox_problem("/nonexistent/bwrap")

    assert problem is not None
    assert "bubblewrap (/nonexistent/bwrap) is not installed" in problem
    assert "apt-get install bubblewrap" in problem
    assert "--no-sandbox" in problem


@needs_bwrap
@pytest.mark.parametrize("unsandboxed", [False, True], ids=["bwrap", "unsandboxed"])
async def test_a_run_sees_none_of_tiebreaks_secrets(
    sandbox: Bwrap,
    project_python: ProjectPython,
    unsandboxed: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    runner: Runner = Unsandboxed() if unsandboxed else sandbox
    # The run looks for the secrets itself, in every environment it can read, and says what
    # it found: its output is cut to a tail, which whole environments would overflow.
    reads_every_environment = python(
        "import os, glob\n"
        f"secrets = {list(SECRETS.values())!r}\n"
        "seen = [repr(dict(os.environ))]\n"
        "for path in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try: seen.append(open(path, 'rb').read().decode(errors='replace'))\n"
        "    except OSError: pass\n"
        "print('PATH' in os.environ, len(seen) > 1)\n"
        "print('found', [s for s in secrets if any(s in text for text in seen)])\n"
    )

    work = work_for(runner, tmp_path)
    run = await runner.run(reads_every_environment, place(project_python, work), Limits())

    assert run.passed, run
    assert run.output_tail.splitlines() == ["True True", "found []"]


@needs_bwrap
async def test_a_run_reaches_no_network_not_even_the_hosts_loopback(
    sandbox: Bwrap, project_python: ProjectPython, tmp_path: Path
) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        # 192.0.2.1 is TEST-NET-1: outside a sandbox, a connection there would hang, never
        # reach anything; inside one, there is no route at all.
        connects = python(
            "import errno, socket\n"
            "print(sorted(line.split(':')[0].strip() for line in open('/proc/net/dev')"
            " if ':' in line))\n"
            f"for address in [('127.0.0.1', {port}), ('192.0.2.1', 53)]:\n"
            "    try: socket.create_connection(address, timeout=20)\n"
            "    except OSError as exc: print(address[0], errno.errorcode.get(exc.errno))\n"
            "    else: print(address[0], 'connected')\n"
        )

        work = work_for(sandbox, tmp_path)
        run = await sandbox.run(connects, place(project_python, work), Limits())

        with pytest.raises(BlockingIOError):
            listener.accept()
    assert run.passed, run
    assert run.output_tail.splitlines() == [
        "['lo']",
        "127.0.0.1 ECONNREFUSED",
        "192.0.2.1 ENETUNREACH",
    ]


@needs_bwrap
async def test_a_run_writes_only_in_its_copy_and_reads_nothing_hidden(
    sandbox: Bwrap, project_python: ProjectPython, tmp_path: Path
) -> None:
    token = secrets.token_hex(8)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "app.py").write_text("print('the change under review')\n")
    env_file = tmp_path / "tiebreak.env"
    env_file.write_text("ANTHROPIC_API_KEY=sk-ant-fake\n")
    targets = {
        "home": "~/" + token,
        "host tmp": f"/tmp/{token}",
        "checkout": str(checkout / token),
        "tiebreak": str(TIEBREAK / token),
        "root": f"/root/{token}",
        "copy": token,
    }
    writes = python(
        "import os, sys\n"
        f"for name, path in {targets!r}.items():\n"
        "    try: open(os.path.expanduser(path), 'w').write('x')\n"
        "    except OSError as exc: print(name, 'refused')\n"
        "    else: print(name, 'written')\n"
        f"print('checkout', os.path.exists({str(checkout)!r}))\n"
        f"try: print('env file', repr(open({str(env_file)!r}).read()))\n"
        "except OSError: print('env file refused')\n"
    )
    before = snapshot(checkout)
    kept = work_for(sandbox, tmp_path)

    shown = place(project_python, tmp_path / "run" / "copy", hidden=(checkout, env_file), keep=kept)
    run = await sandbox.run(writes, shown, Limits())

    assert run.passed, run
    assert run.output_tail.splitlines() == [
        "home written",
        "host tmp written",
        "checkout refused",
        "tiebreak refused",
        "root refused",
        "copy written",
        "checkout False",
        "env file refused",
    ]
    assert snapshot(checkout) == before
    # Beside what it wrote, the copy kept holds the link to its environment it was given.
    assert sorted(os.listdir(kept)) == sorted([token, ".venv"])
    assert (kept / ".venv").is_symlink()
    assert (kept / token).read_text() == "x"
    assert existing(Path("/tmp", token), TIEBREAK / token, Path("/root", token)) == []


@needs_bwrap
@pytest.mark.parametrize("unsandboxed", [False, True], ids=["bwrap", "unsandboxed"])
async def test_a_run_past_its_time_is_stopped_with_all_it_started(
    sandbox: Bwrap, project_python: ProjectPython, unsandboxed: bool, tmp_path: Path
) -> None:
    runner: Runner = Unsandboxed() if unsandboxed else sandbox
    token = f"sleeper-{secrets.token_hex(8)}"
    sleeps = python("import time; time.sleep(1000)", token)
    # Without a sandbox, a process that leaves the group escapes; in one, none does.
    escapes = "" if unsandboxed else f"setsid {sleeps} & "

    run = await runner.run(
        f"{escapes}{sleeps} & {sleeps} & {sleeps}",
        place(project_python, work_for(runner, tmp_path)),
        Limits(timeout_s=2),
    )

    assert run.error == "timed out after 2 s"
    assert run.exit_code is None
    assert processes_running(token) == []


@needs_bwrap
@pytest.mark.parametrize("unsandboxed", [False, True], ids=["bwrap", "unsandboxed"])
async def test_a_run_that_prints_100_mb_keeps_only_its_end(
    sandbox: Bwrap, project_python: ProjectPython, unsandboxed: bool, tmp_path: Path
) -> None:
    runner: Runner = Unsandboxed() if unsandboxed else sandbox
    floods = python(
        "import sys\n"
        "line = 'x' * 1023 + '\\n'\n"
        "for _ in range(100 * 1024): sys.stdout.write(line)\n"
        "print('the end')\n"
    )

    work = work_for(runner, tmp_path)
    run = await runner.run(floods, place(project_python, work), Limits())

    assert run.passed, run.error
    assert run.output_tail.endswith("x\nthe end")
    assert len(run.output_tail) <= TAIL_CHARS
    assert len(run.output_tail.splitlines()) <= TAIL_LINES


@needs_bwrap
async def test_a_sandbox_that_cannot_be_made_is_no_failing_test(
    sandbox: Bwrap, tmp_path: Path
) -> None:
    """bubblewrap exits 1 when it cannot make a sandbox, as a failing test does: had the
    head's run been counted failed, a passing base would have proved a bug."""
    work = work_for(sandbox, tmp_path)
    missing = Place(work, read_only=((tmp_path / "no-such-environment", work / ".venv"),))

    run = await sandbox.run("exit 0", missing, Limits())

    assert not run.failed
    assert run.exit_code is None
    assert run.error is not None
    assert run.error.startswith("the command could not be started: bwrap:")


@needs_bwrap
@pytest.mark.parametrize("unsandboxed", [False, True], ids=["bwrap", "unsandboxed"])
async def test_a_run_has_the_projects_python_and_nothing_of_tiebreaks(
    sandbox: Bwrap, project_python: ProjectPython, unsandboxed: bool, tmp_path: Path
) -> None:
    runner: Runner = Unsandboxed() if unsandboxed else sandbox
    tiebreaks = ("app", "agents", "policies", "tests", "anthropic", "githubkit", "pytest")
    looks = python(
        "import importlib.util, os, shutil, sys\n"
        "print(sys.prefix == os.environ['VIRTUAL_ENV'], os.path.basename(sys.prefix))\n"
        f"print([n for n in {tiebreaks!r} if importlib.util.find_spec(n)])\n"
        "print(shutil.which('tiebreak'), shutil.which('pytest'))\n"
        f"print({sys.prefix!r} in os.environ['PATH'], os.path.exists({sys.prefix!r}))\n"
    )

    run = await runner.run(looks, place(project_python, work_for(runner, tmp_path)), Limits())

    assert run.passed, run
    # Without a sandbox, Tiebreak's environment is on the host's disk: only not in reach.
    assert run.output_tail.splitlines() == [
        "True .venv",
        "[]",
        "None None",
        f"False {unsandboxed}",
    ]


@needs_bwrap
async def test_a_run_without_an_environment_has_the_systems_python_alone(
    sandbox: Bwrap, tmp_path: Path
) -> None:
    looks = "echo $PATH; command -v python3; command -v tiebreak || echo no tiebreak"

    run = await sandbox.run(looks, Place(work_for(sandbox, tmp_path)), Limits())

    assert run.passed, run
    path, *found = run.output_tail.splitlines()
    assert path == ":".join(SYSTEM_PATH)
    assert found[-1] == "no tiebreak"
    assert all(Path(p).parent.as_posix() in SYSTEM_PATH for p in found[:-1])


@needs_bwrap
async def test_a_run_sees_of_the_host_only_what_it_needs(
    sandbox: Bwrap, project_python: ProjectPython, tmp_path: Path
) -> None:
    tree = work_for(sandbox, tmp_path)
    (tree / "module.py").write_text("")
    shown = place(project_python, tmp_path / "run" / "copy", tree=tree)
    lists = python("import os; print(sorted(os.listdir('/'))); print(sorted(os.listdir('/etc')))")

    run = await sandbox.run(lists, shown, Limits())

    assert run.passed, run
    top, etc = (ast.literal_eval(line) for line in run.output_tail.splitlines())
    assert (top, etc) == what_a_run_needs(tmp_path, project_python)


def what_a_run_needs(run_place: Path, python: ProjectPython) -> tuple[list[str], list[str]]:
    """What `/` and `/etc` hold in the sandbox: the system's directories the host has, the
    sandbox's own, the top directories of the installation the project's environment was
    made from and of where the run is (nothing of Tiebreak's own Python); the entries of
    `/etc` a run needs that the host has."""
    system = [name for name in SYSTEM if os.path.lexists(Path("/", name))]
    installations = [named for _, named in python.installations]
    shown = {Path(p).parts[1] for p in [*installations, run_place]}
    top = sorted({*system, "dev", "etc", "proc", "tiebreak", "tmp", *shown})
    return top, sorted({Path(name).parts[0] for name in ETC if Path("/etc", name).exists()})


def test_without_a_sandbox_verification_is_refused_with_the_reason() -> None:
    with pytest.raises(SandboxUnavailable) as refused:
        sandboxed("/nonexistent/bwrap")

    assert refused.value.reason == sandbox_problem("/nonexistent/bwrap")


@needs_bwrap
def test_where_no_cgroup_can_be_made_the_sandbox_is_refused_unless_asked_without(
    tmp_path: Path,
) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mountinfo").write_text("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n")
    (proc / "cgroup").write_text("0::/\n")

    problem = sandbox_problem(proc=proc)

    assert problem == (
        "no memory limit can hold a test's run here: no cgroup hierarchy here offers Tiebreak "
        "the memory and pids controllers (v2: not mounted). Or run the tests in the sandbox "
        "without a memory limit on the whole run (--no-memory-limit): each process is then "
        "held to memory_mb of address space, but not all of them together, nor their files in "
        "memory."
    )
    assert sandbox_problem(proc=proc, memory_limit=False) is None
