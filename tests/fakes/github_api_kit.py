"""What the fake GitHub's tests share: the repository and pull request they set up (and a
second one with files in its commits), the client production builds, and helpers to
read an answer.
"""

from typing import Any

import pytest
from githubkit import AppAuthStrategy, GitHub, Response
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.exception import RequestFailed

from app.github.pool import ConnectionPool
from tests.fakes.github_api import AppKey, FakeGitHub

APP_ID = 4242
INSTALLATION = 77
OTHER_INSTALLATION = 78
OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"
OTHER_REPO = "acme/elsewhere"
NUMBER = 7
HEAD, BASE = "a" * 40, "b" * 40
DIFF_MEDIA = "application/vnd.github.diff"

# app.py: hunk 0 covers old 1-4 / new 1-5, hunk 1 old 20-22 / new 21-23.
DIFF = """\
diff --git a/app.py b/app.py
index 1111111..2222222 100644
--- a/app.py
+++ b/app.py
@@ -1,4 +1,5 @@
 import os
-import sys
+import sys, json
+import re
 # the entry point
 def main():
@@ -20,3 +21,3 @@ def main():
     x = 1
-    y = 2
+    y = 3
     return x
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+world
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 4444444..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old_name.py b/new_name.py
similarity index 90%
rename from old_name.py
rename to new_name.py
index 5555555..6666666 100644
--- a/old_name.py
+++ b/new_name.py
@@ -1,2 +1,2 @@
-a = 1
+a = 2
 b = 2
diff --git a/img.png b/img.png
index 7777777..8888888 100644
Binary files a/img.png and b/img.png differ
"""

APP_PATCH = """\
@@ -1,4 +1,5 @@
 import os
-import sys
+import sys, json
+import re
 # the entry point
 def main():
@@ -20,3 +21,3 @@ def main():
     x = 1
-    y = 2
+    y = 3
     return x"""


def installation_client(
    fake: FakeGitHub,
    key: AppKey,
    *,
    app_id: int = APP_ID,
    installation: int = INSTALLATION,
    validate: bool = True,
    repositories: list[str] | None = None,
) -> GitHub[AppInstallationAuthStrategy]:
    """The client production builds: a GitHub App client narrowed to one installation, on
    the process's one transport to GitHub (:class:`app.github.pool.ConnectionPool`)."""
    app_auth = AppAuthStrategy(app_id, key.private_pem)
    app = GitHub(
        app_auth,
        base_url=fake.base_url + "/",
        auto_retry=False,
        http_cache=False,
        cache_strategy=MemCacheStrategy(),
        timeout=5,
        rest_api_validate_body=validate,
        async_transport=ConnectionPool(),
    )
    if repositories is None:
        return app.with_auth(app_auth.as_installation(installation))
    return app.with_auth(app_auth.as_installation(installation, repositories=repositories))


def payload(response: Response[Any, Any]) -> Any:
    """The JSON of a githubkit response, untyped (githubkit types `.json()` by the schema)."""
    return response.json()


def failure(exc: pytest.ExceptionInfo[RequestFailed]) -> tuple[int, Any]:
    response = exc.value.response
    return response.status_code, response.json()


# -- git data ---------------------------------------------------------------------------------

CALC_NUMBER = 20
CALC_HEAD = "c0ffee" + "0" * 34
CALC_BASE_FILES = {"calc.py": "def add(a, b):\n    return a - b\n", "docs/README.md": "# Calc\n"}
CALC_HEAD_FILES = {"calc.py": "def add(a, b):\n    return a + b\n", "docs/README.md": "# Calc\n"}
CALC_DIFF = """\
diff --git a/calc.py b/calc.py
index 1111111..2222222 100644
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def add_calc_pull(fake: FakeGitHub, **overrides: Any) -> None:
    fields: dict[str, Any] = {
        "head_sha": CALC_HEAD,
        "base_sha": BASE,
        "head_ref": "fix-calc",
        "diff": CALC_DIFF,
        "base_files": CALC_BASE_FILES,
        "head_files": CALC_HEAD_FILES,
    }
    fake.add_pull(REPO, CALC_NUMBER, **(fields | overrides))
