"""The toolchains a command needs from outside the system's directories: found where
Tiebreak's PATH finds them, shown to the run where they are, their `bin` on its PATH; those
of `/usr` (Debian's) need nothing more."""

import os
from pathlib import Path

from app.verification.runner import Limits, Place, environment
from app.verification.sandbox import Bwrap
from app.verification.toolchains import Toolchains
from tests.app.verification.conftest import needs_bwrap
from tests.kits.project import work_for


def installed(root: Path, program: str) -> Path:
    """A toolchain at `root` holding `bin/program`, an executable."""
    binary = root / "bin" / program
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    return binary


def test_a_toolchain_outside_the_system_is_shown_where_it_is_and_put_on_the_path(
    tmp_path: Path,
) -> None:
    go = installed(tmp_path / "opt" / "go", "go")
    node = installed(tmp_path / "nvm" / "v20", "node")
    (node.parent / "npm").symlink_to(node)
    linked = tmp_path / "links"
    linked.mkdir()
    (linked / "go").symlink_to(go)  # as a version manager's shim would point
    search = os.pathsep.join([str(linked), str(node.parent)])

    found = Toolchains.of('go test "./$(dirname {test})" && npm test', search)

    assert found.shown == (go.parent.parent, node.parent.parent)
    assert found.path == (go.parent, node.parent)
    assert found.read_only() == tuple((where, where) for where in found.shown)


def test_a_command_naming_no_toolchain_or_one_not_installed_needs_nothing(
    tmp_path: Path,
) -> None:
    assert Toolchains.of("python -m pytest {test}", str(tmp_path)) == Toolchains()
    assert Toolchains.of("go test ./...", str(tmp_path)) == Toolchains()


def test_a_run_s_go_and_npm_keep_their_caches_in_its_home_and_reach_no_network() -> None:
    told = environment(Path("/tmp"), None, (Path("/opt/go/bin"),))

    assert told["PATH"] == "/opt/go/bin:/usr/local/bin:/usr/bin:/bin"
    assert told["GOCACHE"] == "/tmp/.cache/go-build"
    assert told["GOPATH"] == "/tmp/go"
    assert (told["GOPROXY"], told["GOTOOLCHAIN"], told["GOFLAGS"]) == ("off", "local", "-mod=mod")
    assert told["NPM_CONFIG_OFFLINE"] == "true"


@needs_bwrap
async def test_a_run_in_the_sandbox_finds_a_toolchain_installed_outside_the_system(
    sandbox: Bwrap, tmp_path: Path
) -> None:
    go = installed(tmp_path / "opt" / "go", "go")
    go.write_text('#!/bin/sh\necho "this go ran: $*, its cache in $GOCACHE"\n')
    found = Toolchains.of("go test ./shop", str(go.parent))
    work = work_for(sandbox, tmp_path)

    run = await sandbox.run(
        "go test ./shop",
        Place(work, read_only=found.read_only(), tools=found.path),
        Limits(),
    )

    assert run.passed, run
    assert "this go ran: test ./shop, its cache in /tmp/.cache/go-build" in run.output_tail
