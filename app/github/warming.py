"""The modules githubkit imports on the first call of each endpoint the gateway uses, imported
ahead of any review by a worker's warm-up.

githubkit defines thousands of models and imports each group of them the first time an
endpoint that names one is called: a process's first review paid for it (most of a second,
the models' schemas built as their modules load). The endpoints are listed here as the
gateway calls them; the models each names are read from its code, so that no list of
githubkit's models is kept by hand.
"""

import importlib
import logging
from typing import Any

log = logging.getLogger(__name__)

CALLED = {
    "actions": (
        "async_create_workflow_dispatch",
        "async_download_artifact",
        "async_get_workflow",
        "async_get_workflow_run",
        "async_list_workflow_run_artifacts",
        "async_list_workflow_runs",
    ),
    "apps": ("async_create_installation_access_token", "async_get_authenticated"),
    "checks": ("async_create", "async_get", "async_list_for_ref", "async_update"),
    "git": ("async_get_blob", "async_get_tree"),
    "issues": (
        "async_add_labels",
        "async_create_comment",
        "async_create_label",
        "async_list_comments",
        "async_remove_label",
        "async_update_comment",
    ),
    "pulls": (
        "async_create_reply_for_review_comment",
        "async_create_review",
        "async_get",
        "async_get_review_comment",
        "async_list_files",
        "async_list_review_comments",
        "async_list_reviews",
        "async_update_review_comment",
    ),
    "reactions": (
        "async_create_for_issue_comment",
        "async_create_for_pull_request_review_comment",
        "async_list_for_pull_request_review_comment",
    ),
    "repos": (
        "async_compare_commits",
        "async_download_tarball_archive",
        "async_get_collaborator_permission_level",
        "async_get_content",
    ),
}
"""The REST endpoints the gateway calls, by githubkit's group and method names."""


def import_models(rest: Any) -> int:
    """Import the models the endpoints of :data:`CALLED` name, from `rest` (a client's
    `rest` namespace); how many. A name githubkit no longer has is left to the call."""
    imported = 0
    for group, methods in CALLED.items():
        client = getattr(rest, group)
        for method in methods:
            function = getattr(type(client), method, None)
            if function is None:
                continue
            # Each method imports its models from the `models` package beside `rest`.
            package = function.__module__.rsplit(".rest.", 1)[0]
            try:
                models = importlib.import_module(f"{package}.models")
            except ImportError as exc:
                log.warning("githubkit's models were not imported ahead: %s", exc)
                return imported
            for name in function.__code__.co_names:
                if name[:1].isupper() and getattr(models, name, None) is not None:
                    imported += 1
    return imported
