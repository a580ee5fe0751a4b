"""The dependency direction of DESIGN.md: app → agents → policies, never the other way.

`agents` and `policies` are sans-I/O: they import no web framework, GitHub client, queue,
Redis or HTTP library, so the same engine runs in tests, in the worker and in the terminal.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IO = {
    "fastapi",
    "starlette",
    "uvicorn",
    "githubkit",
    "arq",
    "redis",
    "httpx",
    "httpx2",
    "prometheus_client",
}
FORBIDDEN = {
    "policies": IO | {"app", "agents", "anthropic"},
    "agents": IO | {"app"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_keeps_to_its_layer(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & FORBIDDEN[package])
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {path: bad for path, bad in offenders.items() if bad} == {}


def test_the_check_sees_imports() -> None:
    sample = ROOT / "agents" / "engine.py"
    assert {"policies", "agents"} <= imported_packages(sample)
