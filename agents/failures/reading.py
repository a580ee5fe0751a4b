"""A run's output read by the reader of the runner family that printed it.

Each family has a small reader of its own — a module with its `RUNNER`, whether it
`recognises` an output, and how it `read`s it — tried in order, the first that recognises
the output reading it: pytest's, unittest's, `go test`'s, Node's test runner's (`node
--test`), jest's, vitest's, mocha's, then a bare Python traceback's. Another runner is one
more reader in :data:`READERS`. Output none recognises reads as no failure: its run is judged by its
exit code alone.

The output is a test's, untrusted: its escape sequences (colours among them) are taken out
(:mod:`agents.failures.escapes`), and only its last
:data:`MAX_CHARS` characters are read.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

from agents.failures import (
    go_test,
    jest_output,
    mocha_output,
    node_test,
    plain_python,
    pytest_output,
    python,
    unittest_output,
    vitest_output,
)
from agents.failures.escapes import without_escapes
from agents.failures.failure import OutputReading

MAX_CHARS = 64 * 1024


@dataclass(frozen=True, slots=True)
class Reader:
    """One runner family's reader."""

    runner: str
    recognises: Callable[[str], bool]
    read: Callable[[str, str], OutputReading]


READERS = (
    Reader(pytest_output.RUNNER, pytest_output.recognises, pytest_output.read),
    Reader(unittest_output.RUNNER, unittest_output.recognises, unittest_output.read),
    Reader(go_test.RUNNER, go_test.recognises, go_test.read),
    Reader(node_test.RUNNER, node_test.recognises, node_test.read),
    Reader(jest_output.RUNNER, jest_output.recognises, jest_output.read),
    Reader(vitest_output.RUNNER, vitest_output.recognises, vitest_output.read),
    Reader(mocha_output.RUNNER, mocha_output.recognises, mocha_output.read),
    Reader(plain_python.RUNNER, plain_python.recognises, plain_python.read),
)


def read_output(output: str, test: str) -> OutputReading:
    """What `output`, a run of the test at `test` (its path in the repository), shows."""
    plain = without_escapes(output[-MAX_CHARS:])
    if problem := python.interpreter_problem(plain):
        return OutputReading(plain_python.RUNNER, (), problem)
    reader = next((r for r in READERS if r.recognises(plain)), None)
    if reader is None:
        return OutputReading()
    reading = reader.read(plain, test)
    if reading.problem is None and (problem := python.runner_missing(reading.failures)):
        return replace(reading, problem=problem)
    return reading
