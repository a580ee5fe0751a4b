"""The worker processes of the fleet benchmark (`bench.scale`), from the benchmark's side:
started as `python -m bench.scale_worker`, watched, stopped, and their CPU read — a worker's
with the processes it started (those that parse files: :mod:`app.parsing`), as its work.
"""

import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from bench.fleet import BenchmarkFailed
from bench.webhook_load import cpu_seconds

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 60.0
"""Seconds the worker processes may take to import and start."""
STOP_TIMEOUT = 30.0


class Fleet:
    """`count` worker processes; use as a context manager, and :meth:`stop` to end them."""

    def __init__(
        self,
        count: int,
        workdir: Path,
        *,
        redis_url: str,
        github_url: str,
        private_pem: str,
        latency: float,
    ) -> None:
        self.count = count
        self.latency = latency
        self.workdir = workdir
        self.redis_url = redis_url
        self.github_url = github_url
        self.private_pem = private_pem
        self._processes: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Self:
        key_file = self.workdir / "app-key.pem"
        key_file.touch(mode=0o600)
        key_file.write_text(self.private_pem)
        try:
            for n in range(self.count):
                command = [sys.executable, "-m", "bench.scale_worker", str(self._out(n))]
                command += ["--redis-url", self.redis_url, "--github-url", self.github_url]
                command += ["--key-file", str(key_file), "--latency", str(self.latency)]
                # A file, not a pipe: nobody reads the logs while the load runs.
                with self._log(n).open("wb") as log:
                    self._processes.append(
                        subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
                    )
            self._wait_until_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def cpu(self) -> list[float]:
        """The CPU seconds each worker process, with the processes it started, has used so
        far (0 where /proc has none)."""
        return [cpu_of_tree(process.pid) for process in self._processes]

    def stop(self) -> tuple[list[int], list[str]]:
        """Stop every worker as a shutdown does (SIGTERM): the model calls each made, and
        what went wrong in stopping them."""
        for process in self._processes:
            process.send_signal(signal.SIGTERM)
        problems = []
        for n, process in enumerate(self._processes):
            try:
                code = process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise BenchmarkFailed(f"worker {n} did not stop:\n{self.log_tail(n)}") from None
            if code != 0:
                problems.append(f"worker {n} exited with {code}:\n{self.log_tail(n)}")
        calls = [self._out(n) for n in range(self.count)]
        return [int(c.read_text()) if c.exists() else 0 for c in calls], problems

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        processes, self._processes = self._processes, []
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()

    def check_running(self) -> None:
        """Raise if a worker has exited before it was asked to stop."""
        for n, process in enumerate(self._processes):
            if process.poll() is not None:
                raise BenchmarkFailed(f"worker {n} exited:\n{self.log_tail(n)}")

    def log_tail(self, n: int, lines: int = 20) -> str:
        return "\n".join(self._log(n).read_text(errors="replace").splitlines()[-lines:])

    def _out(self, n: int) -> Path:
        return self.workdir / f"worker-{n}.calls"

    def _log(self, n: int) -> Path:
        return self.workdir / f"worker-{n}.log"

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        for n, process in enumerate(self._processes):
            while not self._out(n).with_suffix(".ready").exists():
                if process.poll() is not None:
                    raise BenchmarkFailed(f"worker {n} exited:\n{self.log_tail(n)}")
                if time.monotonic() > deadline:
                    raise BenchmarkFailed(f"worker {n} did not start within {START_TIMEOUT} s")
                time.sleep(0.05)


def cpu_of_tree(pid: int) -> float:
    """The CPU seconds process `pid` and every process below it have used so far (0 for
    what /proc does not show)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    total, waiting = 0.0, [pid]
    while waiting:
        current = waiting.pop()
        total += cpu_seconds(current) or 0.0
        waiting += children.get(current, [])
    return total
