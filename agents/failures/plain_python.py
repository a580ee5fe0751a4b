"""A Python script's output read, when no test runner printed it (`python {test}`): the
traceback it died with, its last exception the failure."""

from agents.failures import python
from agents.failures.failure import OutputReading

RUNNER = "python"


def recognises(output: str) -> bool:
    return python.TRACEBACK in output


def read(output: str, test: str) -> OutputReading:
    failure = python.last_traceback(output, test)
    return OutputReading(RUNNER, (failure,) if failure is not None else ())
