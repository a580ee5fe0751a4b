"""The endpoints whose models a worker imports ahead are those the gateway calls, each known to
githubkit, so that a first review imports none of them itself."""

import re
import sys
from pathlib import Path

from githubkit import GitHub

from app.github import warming

GATEWAY = Path(warming.__file__).parent
CALL = re.compile(r"rest\.(\w+)\.(async_\w+)\b")
SETUP = "manifest_conversion.py"
"""Calls of `tiebreak setup`, which no worker makes."""


def test_every_endpoint_the_gateway_calls_is_warmed() -> None:
    called: dict[str, set[str]] = {}
    for module in set(GATEWAY.glob("*.py")) - {GATEWAY / SETUP}:
        for group, method in CALL.findall(module.read_text(encoding="utf-8")):
            called.setdefault(group, set()).add(method)

    assert called == {group: set(methods) for group, methods in warming.CALLED.items()}


def test_the_models_of_each_endpoint_are_imported() -> None:
    github = GitHub("a-token")  # kept: githubkit's namespaces hold their client weakly
    rest = github.rest

    imported = warming.import_models(rest)

    for group, methods in warming.CALLED.items():
        for method in methods:
            assert hasattr(type(getattr(rest, group)), method), f"{group}.{method}"
    assert imported > len(warming.CALLED)
    assert any(
        name.startswith("githubkit_schemas.") and ".models.group_" in name for name in sys.modules
    )
