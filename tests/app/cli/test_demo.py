"""`tiebreak demo` as a real process, with no key in its environment: a whole review of the
bundled pull request by the scripted agents, labelled as a demo wherever it prints, its
transcript page written and its link given — and no model asked anything (the Messages API
it would reach is a local fake that records every request)."""

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.app.verification.conftest import needs_bwrap
from tests.fakes.messages_api import FakeMessagesAPI
from tests.kits.command import Done, run_tiebreak

LABEL = "Demo: scripted agents, no model was called"
CLAIM = "When `total` is a multiple of `per_page`, `total // per_page + 1` counts one page too many"
FIX = "        return max(1, (total + per_page - 1) // per_page)"
WARNING = "Warning: page_count() trusts per_page to be at least 1"


def demo(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[Done, FakeMessagesAPI]:
    """`tiebreak demo` with `args`, its temporary files under `tmp_path`, the Messages API
    it would call a local fake, and `env` over its environment."""
    with FakeMessagesAPI.queued() as api:
        done = run_tiebreak(
            "demo",
            *args,
            cwd=tmp_path,
            env={"ANTHROPIC_BASE_URL": api.base_url, "TMPDIR": str(tmp_path), **(env or {})},
        )
    return done, api


def recording_browser(path: Path, opened: Path) -> Path:
    """A browser at `path` that writes the address it is asked to open into `opened`."""
    path.write_text(
        f"#!{sys.executable}\nimport sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n"
    )
    path.chmod(0o755)
    return path


def page_of(link: str) -> str:
    """The transcript page a `file://` link leads to."""
    assert link.startswith("file:///"), link
    return Path(link.removeprefix("file://")).read_text(encoding="utf-8")


def test_the_demo_prints_a_whole_review_without_a_key(tmp_path: Path) -> None:
    done, api = demo(tmp_path, "--no-verify", "--no-browser")

    assert done.returncode == 0, done.stderr
    assert api.requests == []
    lines = done.stdout.splitlines()
    assert lines[0] == LABEL
    assert done.stderr.splitlines()[0] == f"tiebreak: {LABEL}"
    assert "pagination.py:11  major  fixed · unanimous · round 1" in done.stdout
    assert CLAIM in done.stdout
    assert FIX in done.stdout
    assert "pagination.py:9-11  minor  warning · arbiter (budget) · round 2" in done.stdout
    assert WARNING in done.stdout
    assert "round 2 · arbiter · arbitrate on F2 · 5 calls" in done.stderr
    (totals,) = [line for line in lines if line.startswith("2 findings")]
    assert totals.startswith("2 findings (1 fixed, 1 with a warning) · 1 unit · 2 rounds")
    assert totals.endswith(f" · {LABEL}")
    (link,) = [line.removeprefix("Transcript: ") for line in lines if "Transcript: " in line]
    page = page_of(link)
    assert LABEL in page
    assert "example/pagination#1" in page
    assert "page_count() trusts per_page to be at least 1" in page


def test_the_demo_s_json_says_it_is_a_demo(tmp_path: Path) -> None:
    done, api = demo(tmp_path, "--json", "--no-verify", "--no-browser")

    assert done.returncode == 0, done.stderr
    assert api.requests == []
    data: dict[str, Any] = json.loads(done.stdout)
    assert data["demo"] == LABEL
    (unit,) = data["units"]
    ended = {f["finding"]["id"]: f for f in unit["findings"]}
    assert (ended["F1"]["resolution"], ended["F1"]["consensus"]) == ("fixed", "unanimous")
    assert ended["F1"]["patch"]["replacement"] == FIX.removeprefix("    ")
    assert (ended["F2"]["resolution"], ended["F2"]["consensus"]) == ("warning", "arbiter")
    assert ended["F1"]["verification"] is None
    assert data["walkthrough"]["files"][0]["path"] == "pagination.py"
    assert LABEL in page_of(data["transcript"])


@needs_bwrap
def test_with_verify_the_tester_s_test_is_reproduced_and_the_fix_verified(
    tmp_path: Path,
) -> None:
    """Also as `tiebreak demo` alone runs it where the sandbox can run: the first thing a
    person sees is a bug proved by its test and the fix the test verifies."""
    done, api = demo(tmp_path, "--no-browser")

    assert done.returncode == 0, done.stderr
    assert api.requests == []
    assert "Test test_last_page.py: reproduced, fix verified" in done.stdout
    assert "Tests: 1 finding tested, 1 reproduced" in done.stdout
    assert done.stdout.splitlines()[0] == LABEL

    shown, _ = demo(tmp_path, "--verify", "--json", "--no-browser")
    (unit,) = json.loads(shown.stdout)["units"]
    (tested,) = [f for f in unit["findings"] if f["verification"] is not None]
    assert (tested["verification"]["verdict"], tested["fix_verified"]) == ("reproduced", True)
    assert (
        "AssertionError: Lists differ: [] != [5, 6, 7, 8, 9]"
        in (tested["verification"]["output_tail"])
    )


def test_where_no_sandbox_can_run_the_demo_says_so_and_reviews_without_the_test(
    tmp_path: Path,
) -> None:
    # Nothing but Tiebreak's own environment on the PATH: no bubblewrap, no git.
    done, api = demo(tmp_path, "--no-browser", env={"PATH": str(Path(sys.executable).parent)})

    assert done.returncode == 0, done.stderr
    assert api.requests == []
    (said,) = [line for line in done.stderr.splitlines() if "test is not run" in line]
    assert said.startswith("tiebreak: the tester's test is not run (--verify needs the sandbox): ")
    assert "pagination.py:11  major  fixed · unanimous · round 1" in done.stdout
    assert "reproduced" not in done.stdout


def test_the_transcript_opens_in_the_browser_the_person_named(tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = recording_browser(tmp_path / "browser", opened)

    done, _ = demo(tmp_path, "--no-verify", env={"BROWSER": str(browser)})

    assert done.returncode == 0, done.stderr
    (link,) = [line.removeprefix("Transcript: ") for line in done.stdout.splitlines()
               if "Transcript: " in line]  # fmt: skip
    assert opened.read_text() == link
    assert "tiebreak: the transcript is open in your browser" in done.stderr


def test_with_no_browser_none_is_opened(tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = recording_browser(tmp_path / "browser", opened)

    done, _ = demo(tmp_path, "--no-verify", "--no-browser", env={"BROWSER": str(browser)})

    assert done.returncode == 0, done.stderr
    assert not opened.exists()
    assert "browser" not in done.stderr


def test_without_a_display_no_console_browser_takes_the_terminal(tmp_path: Path) -> None:
    # A server's terminal: no display, and a text browser Python would otherwise run there.
    opened = tmp_path / "opened.txt"
    tools = tmp_path / "bin"
    tools.mkdir()
    recording_browser(tools / "www-browser", opened)
    path = f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"

    done, _ = demo(tmp_path, "--no-verify", env={"PATH": path, "TERM": "xterm"})

    assert done.returncode == 0, done.stderr
    assert not opened.exists()
    assert "browser" not in done.stderr
