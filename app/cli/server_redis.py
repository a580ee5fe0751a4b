"""The Redis a command reads the server's state in, as `status` and `learnings export` find
it: REDIS_URL, else the Redis of the `tiebreak serve` that runs its own under the same
TIEBREAK_DATA_DIR (run the command where `tiebreak serve` runs)."""

from app.cli.exits import fail
from app.settings import Settings
from app.store.embedded import recorded_url, redis_dir


def server_redis(settings: Settings) -> str:
    """The URL of the server's Redis; exit 2 saying where it was looked for when none is."""
    data_dir = redis_dir(settings.tiebreak_data_dir)
    redis_url = settings.redis_url or recorded_url(data_dir)
    if redis_url is None:
        fail(
            f"REDIS_URL is not set, and no `tiebreak serve` runs its own Redis in {data_dir} "
            "(TIEBREAK_DATA_DIR)"
        )
    return redis_url
