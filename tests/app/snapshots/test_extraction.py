"""A snapshot's archive is its author's to write: extracted under its directory or not at all."""

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from app.snapshots.extraction import extract
from app.snapshots.limits import BLOCK, MIB, Footprint, SnapshotLimits, SnapshotRefused
from tests.kits.archives import (
    TOP,
    Member,
    archive,
    device,
    directory,
    empty_files,
    header,
    honest,
    link,
    oversized_header,
    regular,
    sparse,
)


def written(where: Path) -> set[str]:
    return {str(p.relative_to(where)) for p in where.rglob("*")}


def test_an_honest_archive_is_extracted_under_its_top_directory(tmp_path: Path) -> None:
    source = tmp_path / "archive.tar.gz"
    source.write_bytes(honest({"calc.py": "x = 1\n", "docs/README.md": "# Calc\n"}))
    (tmp_path / "into").mkdir()

    top, footprint = extract(source, tmp_path / "into", SnapshotLimits())

    assert top == tmp_path / "into" / TOP
    assert (top / "calc.py").read_text() == "x = 1\n"
    assert (top / "docs" / "README.md").read_text() == "# Calc\n"
    # The top directory, docs/ and the two files: a block of the disk each.
    assert footprint == Footprint(4 * BLOCK, 4)


def test_a_path_too_long_for_a_tar_header_is_read_from_its_pax_header(tmp_path: Path) -> None:
    # As GitHub writes it: a pax header before the member, past 100 characters.
    long = "docs/" + "a-long-name-" * 20 + ".md"
    source = tmp_path / "archive.tar.gz"
    source.write_bytes(honest({long: "# Long\n"}))
    (tmp_path / "into").mkdir()

    top, _ = extract(source, tmp_path / "into", SnapshotLimits())

    assert (top / long).read_text() == "# Long\n"


def test_members_count_the_disk_they_take_not_the_bytes_they_declare(tmp_path: Path) -> None:
    # 1,500 directories holding an empty file each declare no byte, and take 3,001 inodes
    # and as many blocks of the disk.
    # (The cache's tests count what they take whole.)
    source = tmp_path / "archive.tar.gz"
    source.write_bytes(empty_files(1_500))
    (tmp_path / "into").mkdir()

    with pytest.raises(SnapshotRefused, match="larger than the 10 MiB"):
        extract(source, tmp_path / "into", SnapshotLimits(tree_bytes=10 * MIB))


HOSTILE: dict[str, tuple[list[Member], str]] = {
    "a ../ path": ([directory(TOP), regular(f"{TOP}/../escaped.py")], "outside its tree"),
    "an absolute path": ([directory(TOP), regular("/tmp/escaped.py")], "outside its tree"),
    "a symlink to /etc": ([directory(TOP), link(f"{TOP}/etc", "/etc")], "link out of its tree"),
    "a hard link to /etc/passwd": (
        [directory(TOP), link(f"{TOP}/passwd", "/etc/passwd", tarfile.LNKTYPE)],
        "link out of its tree",
    ),
    "a symlink up and out": (
        [directory(TOP), link(f"{TOP}/up", "../.."), regular(f"{TOP}/up/escaped.py")],
        "could not be extracted safely",
    ),
    "a device file": ([directory(TOP), device(f"{TOP}/null")], "special file"),
    "a second top directory": (
        [directory(TOP), directory("other"), regular("other/escaped.py")],
        "outside its top directory",
    ),
    "a file at the top": ([regular("escaped.py")], "does not start with its one top directory"),
    "more files than the cap": (
        [directory(TOP), *(regular(f"{TOP}/f{i}.py") for i in range(5))],
        "larger than",
    ),
    "more bytes than the cap": (
        [directory(TOP), regular(f"{TOP}/big.bin", b"0" * 4 * BLOCK)],
        "larger than",
    ),
    "a chain of headers before one member": (
        [
            directory(TOP),
            *[header(tarfile.XHDTYPE, b"15 comment=abc\n")] * 600,
            regular(f"{TOP}/a"),
        ],
        "more than 8 headers before one member",
    ),
    "a sparse file": ([directory(TOP), sparse(f"{TOP}/holes")], "sparse file"),
    "a hard link ahead of its file": (
        [directory(TOP), link(f"{TOP}/h", f"{TOP}/a", tarfile.LNKTYPE), regular(f"{TOP}/a")],
        "hard link to no file before it",
    ),
}


@pytest.mark.parametrize(("members", "refusal"), HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_archive_is_refused_and_nothing_is_written_outside(
    tmp_path: Path, members: list[Member], refusal: str
) -> None:
    source = tmp_path / "work" / "archive.tar.gz"
    source.parent.mkdir()
    source.write_bytes(archive(*members))
    into = tmp_path / "work" / "into"
    into.mkdir()
    before = written(tmp_path)

    with pytest.raises(SnapshotRefused, match=refusal):
        extract(source, into, SnapshotLimits(tree_files=4, tree_bytes=4 * BLOCK))

    assert {p for p in written(tmp_path) - before if not p.startswith("work/into")} == set()
    assert not Path("/tmp/escaped.py").exists()


def test_an_archive_that_is_no_gzipped_tar_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "archive.tar.gz"
    source.write_bytes(b"not a tarball")
    (tmp_path / "into").mkdir()

    with pytest.raises(SnapshotRefused, match="could not be extracted"):
        extract(source, tmp_path / "into", SnapshotLimits())


ROOT = Path(__file__).parents[3]
"""The project's root, where the child process imports Tiebreak from."""

# Extracts an archive under a directory on a filesystem of 64 KiB, in a user and mount
# namespace of its own, and says what the extraction raised.
_FULL_DISK = """
import errno, sys
from pathlib import Path
from app.snapshots.extraction import extract
from app.snapshots.limits import SnapshotLimits
try:
    extract(Path(sys.argv[1]), Path(sys.argv[2]), SnapshotLimits())
except OSError as exc:
    print("disk", errno.errorcode.get(exc.errno or 0))
except Exception as exc:
    print("refused", exc)
"""


def _mounts_in_a_namespace() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    done = subprocess.run([unshare, "-rm", "true"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.skipif(not _mounts_in_a_namespace(), reason="no user namespaces to mount a tmpfs")
def test_a_full_disk_is_said_to_be_the_disk_not_the_archive(tmp_path: Path) -> None:
    source = tmp_path / "archive.tar.gz"
    source.write_bytes(honest({"big.bin": "0" * 200_000}))
    into = tmp_path / "into"
    into.mkdir()
    script = 'mount -t tmpfs -o size=64k none "$2" && cd "$3" && "$4" -c "$5" "$1" "$2"'

    done = subprocess.run(
        [
            "unshare",
            "-rm",
            "sh",
            "-c",
            script,
            "sh",
            source,
            into,
            ROOT,
            sys.executable,
            _FULL_DISK,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )

    assert done.stdout.strip() == "disk ENOSPC", done.stderr


# Extracts an archive and says what the extraction raised, and how much the process's peak
# memory grew meanwhile (in KiB, as Linux counts `ru_maxrss`).
_PEAK = """
import resource, sys
from pathlib import Path
from app.snapshots.extraction import extract
from app.snapshots.limits import SnapshotLimits
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    extract(Path(sys.argv[1]), Path(sys.argv[2]), SnapshotLimits())
    print("extracted")
except Exception as exc:
    print("refused", exc)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.parametrize(
    ("kind", "declared", "said"),
    [
        (tarfile.GNUTYPE_LONGNAME, 256 * MIB, "a header of 256 MiB"),
        (tarfile.XHDTYPE, 300 * MIB, "a header of 300 MiB"),
    ],
    ids=["a GNU long name of 256 MiB", "a pax header of 300 MiB"],
)
def test_a_header_larger_than_a_mib_is_refused_before_it_is_read(
    tmp_path: Path, kind: bytes, declared: int, said: str
) -> None:
    source = tmp_path / "archive.tar.gz"
    oversized_header(source, kind, declared)
    into = tmp_path / "into"
    into.mkdir()
    assert source.stat().st_size < MIB  # what is downloaded is small

    done = subprocess.run(
        [sys.executable, "-c", _PEAK, source, into],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=100,
    )

    refusal, grown = done.stdout.splitlines()
    assert int(grown) < 32 * 1024, f"the peak memory grew by {int(grown) // 1024} MiB"
    assert refusal == f"refused its archive has {said}, more than the 1 MiB a review reads of one"
    assert written(into) == set()
