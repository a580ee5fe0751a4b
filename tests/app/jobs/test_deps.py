"""What a worker is set up with from its settings: the cache of repositories' snapshots."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.settings import Settings
from app.snapshots.cache import snapshots_for
from app.snapshots.limits import MIB


def test_the_snapshots_are_kept_under_the_data_directory_within_the_settings(
    tmp_path: Path,
) -> None:
    settings = Settings(
        tiebreak_data_dir=tmp_path,
        tiebreak_snapshot_cache_mb=300,
        tiebreak_snapshot_max_mb=100,
        tiebreak_snapshot_cache_files=9_000,
        tiebreak_snapshot_max_files=3_000,
    )

    cache = snapshots_for(settings)

    assert cache is not None
    assert (cache.limits.tree_bytes, cache.limits.cache_bytes) == (100 * MIB, 300 * MIB)
    assert (cache.limits.tree_files, cache.limits.cache_files) == (3_000, 9_000)
    assert cache.limits.archive_bytes == 100 * MIB
    assert not (tmp_path / "snapshots").exists()  # made when a review first reads one


def test_a_cache_of_nothing_reads_no_snapshot() -> None:
    assert snapshots_for(Settings(tiebreak_snapshot_cache_mb=0)) is None


def test_a_snapshot_larger_than_the_cache_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="TIEBREAK_SNAPSHOT_MAX_MB"):
        Settings(tiebreak_snapshot_cache_mb=100, tiebreak_snapshot_max_mb=200)
    with pytest.raises(ValidationError, match="TIEBREAK_SNAPSHOT_MAX_FILES"):
        Settings(tiebreak_snapshot_cache_files=1_000, tiebreak_snapshot_max_files=2_000)
