"""A local fake of the slice of GitHub's API that Tiebreak uses, for tests over real HTTP.

`FakeGitHub` is a real HTTP server on 127.0.0.1 (an ephemeral port, a background thread), so
a test drives the production client — githubkit with GitHub App authentication — over
loopback with no mocking library, and a `tiebreak serve` subprocess can use the same fake
through `GITHUB_API_URL`:

    key = new_app_key()
    with FakeGitHub(app_id=42, public_key_pem=key.public_pem) as fake:
        fake.add_installation(7, repos=["octo/app"])
        fake.add_pull("octo/app", 1, head_sha="h1", base_sha="b1", diff=DIFF)
        client = GitHub(AppAuthStrategy(42, key.private_pem), base_url=fake.base_url + "/", ...)
        ...
    fake.reviews("octo/app", 1)

Actions (`add_workflow`, `deny_actions`, `send_webhooks`, `workflow_runs`) are described in
:mod:`tests.fakes.github_api.actions`.

State lives in memory: tests set it up (`add_installation`, `add_repo`, `delete_repo`,
`set_file`, `add_pull`, `add_label`, `add_review`, `add_issue_comment`, `add_review_comment`,
`add_reaction`, `resolve_thread`, `unresolve_thread`, `set_permission`,
`issue_person_token`) and inspect it
(`requests`, `check_runs`, `reviews`, `review_comments`, `issue_comments`, `reactions`,
`thread_resolved`, `labels`, `issue_labels`, `branch_files`, `branch_sha`, `commit`,
`tree_entries`, `blob`, `ref_updates`, and the credentials that went by: `issued_tokens`,
`app_jwts`).
Every change happens under one lock, since requests arrive on the server's threads.

Files live in a git-like store: blobs and trees are content-addressed with git's own SHA-1
(a blob's SHA is `git hash-object`'s), a commit has a tree and parents, and a branch names a
commit. A pull request's base and head are commits (with the SHAs the test chose), its head
branch points at its head (in the head repository: a fork's branches are the fork's), and a
push (`add_pull` again with a new head) adds a commit on top of the previous head, or with
`parent` on top of another commit (a force-push: the previous head stays in the store).
`set_file` edits a commit's snapshot in place: setup is not history. The contents API and the
Git Data API (refs, commits, trees, blobs) read and write this store.

Requests are checked the way GitHub checks them, so a test fails exactly where GitHub would
answer an error:

* Every request is checked against GitHub's own REST description
  (:mod:`tests.fakes.github_api.openapi`, over the extract in `tests/fixtures/github-rest`): a
  JSON body its operation's schema refuses is answered 422 and noted in `problems` (with the
  operation, the path and the schema's complaint), a field the schema lacks is noted, and so
  is a route answered that is no operation of the description nor listed in `NOT_REST` with
  the reason it is not GitHub's REST API (GraphQL, the App manifest's web page, the archive
  and artifact downloads GitHub serves from other hosts). Tests that send refused bodies on
  purpose turn `bodies_checked` off.

* `POST /app/installations/{id}/access_tokens` and `GET /app` (the App, with its `slug`)
  want an RS256 JWT signed with the App's key,
  `iss` equal to the App id and `exp` at most ten minutes ahead; every other endpoint wants an
  installation token (`Authorization: token …`, `ghs_` and 36 letters and digits, as GitHub's
  look) that covers the repository, or a person's token (`ghp_…`, `issue_person_token`) that
  reaches it. A missing or
  unknown token is 401; a valid token for another repository is 404, as GitHub hides
  repositories a token cannot see.
* Review comments are placed on the pull request's diff: a path not in it, a line that is not
  a line of the diff on its side (RIGHT: added and context lines of the new file; LEFT:
  removed and context lines of the old one), a range across hunks or not ascending fails the
  whole review with 422 and GitHub's own error strings. A COMMENT or REQUEST_CHANGES review
  needs a body or at least one comment; `commit_id` must be one of the pull request's heads;
  a pending review (no `event`) blocks any other review on the pull request.
* Check runs: `head_sha` must be a commit the fake knows (a pull request's head or base, a
  ref given to `set_file`); the status and conclusion vocabularies an App may use,
  `completed_at` only with a conclusion, at most 50 annotations and 3 actions a request,
  annotations of successive updates appended.
* Labels: names are case-insensitive; creating an existing one is 422 `already_exists`;
  adding a missing one to an issue creates it with color `ededed`; removing one the issue
  lacks is 404.
* Authorship: whatever an installation posts (a review, a comment, a reply, a reaction) is
  written by the App's bot user, login `<app_slug>[bot]` and type `Bot`; a review posted
  with a person's token is written by that person (type `User`); what a test adds
  (`add_review`, `add_issue_comment`, `add_review_comment`) is written by whoever it names,
  a person (`User`) by default or another App (`Bot`, such as `github-actions[bot]`).
* Comments: an issue comment's body is at most 65,536 characters (GitHub's 422 `Body is too
  long`); the App may edit only its own issue comments (403 `Resource not accessible by
  integration` otherwise). A reply goes to a review comment of that pull request (404
  otherwise) and to the top of its thread: GitHub's docs say replies to replies are not
  supported, and the fake refuses one with 422. A reaction is one of GitHub's eight
  contents; the same reaction by the same user again answers 200 with the existing one
  instead of 201.
* Collaborator permission: `permission` is the role folded to admin/write/read/none
  (maintain → write, triage → read). A login never given to `set_permission` is 404, as
  GitHub answers for a user it does not know (for a known user without access it answers
  200 with `none`; give the fake that role to get that answer).
* Git Data: a ref update that is not a fast-forward (the new commit does not descend from
  the branch's commit) is 422 `Update is not a fast forward` unless `force` is true; every
  update of an existing branch a token may write is kept in `ref_updates` with its `force`
  flag, refused or not. A branch that moves
  moves the open pull requests whose head it is. A fork (a pull request's `head_repo` other
  than its repository) is readable through the base repository's token while the pull
  request is open, writable only if the pull request has `maintainer_can_modify` (and only
  its head branch), and otherwise 403 `Resource not accessible by integration`. A fork
  deleted (`delete_repo`) is gone; its pull requests keep their head commit in the base
  repository and answer `head.repo: null`, as GitHub does.
* Compare (`GET .../compare/BASE...HEAD`, two dots taken alike): each side a branch or a
  commit's full SHA (404 otherwise, and for unrelated histories); `status`, `ahead_by` and
  `behind_by` from the commit graph, the newest 250 commits oldest first, and `files` from
  the merge base to HEAD (at most 300, patches computed from the snapshots). Not modelled:
  paging, the diff media types, another repository's `owner:ref`.
* Archives (`GET .../tarball/{ref}`, :mod:`tests.fakes.github_api.archives`): 302 to a
  download URL under `/_codeload` that needs no `Authorization`, only its own token, serving
  the commit's snapshot as `git archive` writes it (one top directory `{owner}-{repo}-{sha7}/`);
  404 for a ref the repository lacks. `replace_archive` has a commit served other bytes.
  Not modelled: the zipball, the token's five-minute expiry.
* GraphQL (`POST /graphql`) answers two queries. The review threads of a pull request
  (`repository.pullRequest.reviewThreads`: `pageInfo`, and per thread `isResolved`,
  `resolvedBy { login }` and its comments' `databaseId`s), recognised by `reviewThreads` in it
  rather than parsed. A thread is a review comment that is no reply, in the order made;
  `resolve_thread(…, by=login)` resolves one as that user, `unresolve_thread` reopens it.
  `resolvedBy` is a `User`, as on GitHub: the user who resolved the thread, null for an open
  one and for one an App's bot user resolved. It also takes the `resolveReviewThread` and
  `unresolveReviewThread` mutations, on a thread's node id (`id` in the query), the resolver
  being the person whose token it is (none for an installation's).
  And files' texts: a repository's aliased `object(expression: $var)` fields, each `... on
  Blob` with some of `text`, `isBinary`, `isTruncated`, `byteSize`, parsed strictly (a
  variable undeclared, not `String!` or not a string, a field Blob lacks: errors, as
  GitHub's); each expression `<commit or branch>:<path>` read from the git store, null for
  a commit or path the repository lacks, `{}` for a directory (no Blob), `isBinary` with a
  null `text` for bytes that are not UTF-8 (truncation is not modelled).
  The token is checked as for REST (401 without a valid one); a repository it does not
  cover or a pull request the repository lacks is 200 with `NOT_FOUND` errors, as GitHub
  answers. Any other query (or one asking for objects in another shape) is 200 with an
  error and is noted in `problems`.
* The diff media type answers 406 `too_large` above 300 files or 20,000 lines (or when the
  pull request was added with `too_large=True`).
* The App manifest flow (:mod:`tests.fakes.app_manifests`): GitHub's "new App" form, which
  registers this fake's App and redirects with a code, and `POST /app-manifests/{code}/
  conversions`, which trades a code once, within an hour, for the App's credentials. Call
  `allow_registration` with the App's private key first.

Error bodies follow GitHub's shape (`message`, `documentation_url`, `status`, and `errors`
where GitHub gives them). The review error strings are GitHub's, as observed in public bug
reports; the wording of the schema-style messages (`Invalid request. …`) is approximate, so
assert on the status and the key phrase, not on a whole message. Not modelled: GitHub's
implicit review around a lone reply (a reply gets a `pull_request_review_id`, but `reviews`
and the reviews API list only the reviews created through `POST .../reviews`), a diff
recomputed when a branch moves (the pull request keeps the diff the test gave), and token
permissions (every installation token may write).

A handler that raises answers 500 and notes the failure in `problems`; with `strict` (the
default) leaving the `with` block with problems noted raises :class:`FakeGitHubError`.
`fail_next` makes matching requests answer an error instead (a 502, a secondary rate limit
with `retry-after`), optionally after the request took effect.

The package has one module per API section, each a mixin of `FakeGitHub`: `auth`, `pulls`,
`reviews`, `contents`, `checks`, `labels`, `comments` (issue comments, reactions and review
comments), `graphql` (with `blobs`, its files' texts), `git_data`, `compare` and `archives`,
built on `gitstore` (the git store) and `base` (the state they share, typed). `fake` assembles the
class, with its constructor, routing table and answering, from those and from `setting_up`
and `inspecting`, its methods for tests, and checks each request with `openapi` (GitHub's
description); `constants`, `records`, `state` and `diffs` are the leaves they all import.
"""

from tests.fakes.github_api.auth import AppKey, new_app_key
from tests.fakes.github_api.constants import (
    AUTO_LABEL_COLOR,
    BODY_TOO_LONG,
    COMMIT_NOT_IN_PULL,
    GRAPHQL_UNSUPPORTED,
    HUNK_BLANK,
    LINE_NOT_IN_DIFF,
    LINE_UNRESOLVED,
    NEEDS_COMMENT,
    NOT_ACCESSIBLE,
    NOT_FAST_FORWARD,
    OBJECT_MISSING,
    ONE_PENDING_REVIEW,
    PATH_INVALID,
    POSITION_INVALID,
    REF_MISSING,
    REPLY_TO_REPLY,
    START_NOT_BEFORE_LINE,
    START_NOT_IN_HUNK,
)
from tests.fakes.github_api.fake import FakeGitHub
from tests.fakes.github_api.records import (
    CheckRun,
    Commit,
    DiffLine,
    FakeGitHubError,
    IssueComment,
    Label,
    Recorded,
    RefUpdate,
    Review,
    ReviewComment,
)

__all__ = [
    "AUTO_LABEL_COLOR",
    "BODY_TOO_LONG",
    "COMMIT_NOT_IN_PULL",
    "GRAPHQL_UNSUPPORTED",
    "HUNK_BLANK",
    "LINE_NOT_IN_DIFF",
    "LINE_UNRESOLVED",
    "NEEDS_COMMENT",
    "NOT_ACCESSIBLE",
    "NOT_FAST_FORWARD",
    "OBJECT_MISSING",
    "ONE_PENDING_REVIEW",
    "PATH_INVALID",
    "POSITION_INVALID",
    "REF_MISSING",
    "REPLY_TO_REPLY",
    "START_NOT_BEFORE_LINE",
    "START_NOT_IN_HUNK",
    "AppKey",
    "CheckRun",
    "Commit",
    "DiffLine",
    "FakeGitHub",
    "FakeGitHubError",
    "IssueComment",
    "Label",
    "Recorded",
    "RefUpdate",
    "Review",
    "ReviewComment",
    "new_app_key",
]
