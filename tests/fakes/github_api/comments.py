"""The fake GitHub's comments on a pull request: issue comments (a body of at most 65,536
characters, the App editing only its own), reactions to issue and review comments (one of
GitHub's eight contents, the same one again answered 200), and review comments with their
replies (which go to the top of a thread: a reply to a reply is refused).
"""

import json
from typing import Any

from tests.fakes.github_api.base import _Base, _user
from tests.fakes.github_api.constants import (
    _ISSUE_COMMENTS_DOCS,
    _REACTIONS_DOCS,
    _REVIEW_COMMENTS_DOCS,
    BODY_TOO_LONG,
    MAX_COMMENT_BODY,
    NOT_ACCESSIBLE,
    REACTIONS,
    REPLY_TO_REPLY,
)
from tests.fakes.github_api.diffs import _diff_lines, _find_line
from tests.fakes.github_api.records import IssueComment, ReviewComment
from tests.fakes.github_api.state import (
    _Answer,
    _error,
    _invalid,
    _not_found,
    _now,
    _object_body,
    _Pull,
    _Reaction,
    _Repo,
    _Request,
    _unprocessable,
)


class _Comments(_Base):
    """The issue comments, reactions and review comments endpoints."""

    # -- issue comments -----------------------------------------------------------------------

    def _issue_comment(self, repo: _Repo, comment_id: str, docs: str) -> IssueComment:
        comment = repo.issue_comments.get(int(comment_id))
        if comment is None:
            raise _not_found(docs)
        return comment

    def _list_comments(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        comments = [c for c in repo.issue_comments.values() if c.number == pull.number]
        return self._page(request, [self._issue_comment_json(repo, c) for c in comments])

    def _create_comment(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_ISSUE_COMMENTS_DOCS}#create-an-issue-comment"
        pull = self._pull(repo, params["number"])
        text = _comment_body(request, "IssueComment", docs)
        now = _now()
        bot = f"{self.app_slug}[bot]"
        comment = IssueComment(next(self._ids), pull.number, text, bot, "Bot", now, now)
        repo.issue_comments[comment.id] = comment
        return _Answer(201, self._issue_comment_json(repo, comment))

    def _get_comment(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_ISSUE_COMMENTS_DOCS}#get-an-issue-comment"
        return _Answer(
            200, self._issue_comment_json(repo, self._issue_comment(repo, params["id"], docs))
        )

    def _update_comment(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_ISSUE_COMMENTS_DOCS}#update-an-issue-comment"
        comment = self._issue_comment(repo, params["id"], docs)
        if comment.author != f"{self.app_slug}[bot]":
            # The fake's rule, unverified on GitHub (where write access may edit any comment):
            # the App edits only its own comments, so a test notices one that edits a person's.
            raise _error(403, NOT_ACCESSIBLE, docs)
        comment.body = _comment_body(request, "IssueComment", docs)
        comment.updated_at = _now()
        return _Answer(200, self._issue_comment_json(repo, comment))

    def _issue_comment_json(self, repo: _Repo, comment: IssueComment) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}"
        url = f"{api}/issues/comments/{comment.id}"
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": url,
            "html_url": (
                f"https://github.com/{repo.full_name}/pull/{comment.number}"
                f"#issuecomment-{comment.id}"
            ),
            "body": comment.body,
            "user": _user(comment.author, comment.author_type, self._user_id(comment.author)),
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "issue_url": f"{api}/issues/{comment.number}",
            "author_association": self._association(repo, comment.author),
            "reactions": self._rollup(repo, comment.id, f"{url}/reactions"),
        }

    def _association(self, repo: _Repo, login: str) -> str:
        role = repo.permissions.get(login.lower(), (login, "none"))[1]
        return "NONE" if role == "none" else "COLLABORATOR"

    # -- reactions ----------------------------------------------------------------------------

    def _react_to_issue_comment(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        docs = f"{_REACTIONS_DOCS}#create-reaction-for-an-issue-comment"
        comment = self._issue_comment(repo, params["id"], docs)
        return self._react(request, repo, comment.id, docs)

    def _react_to_review_comment(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        docs = f"{_REACTIONS_DOCS}#create-reaction-for-a-pull-request-review-comment"
        _, comment = self._review_comment_by_id(repo, params["id"], docs)
        return self._react(request, repo, comment.id, docs)

    def _list_review_comment_reactions(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        docs = f"{_REACTIONS_DOCS}#list-reactions-for-a-pull-request-review-comment"
        _, comment = self._review_comment_by_id(repo, params["id"], docs)
        content = request.query.get("content")
        if content is not None and content not in REACTIONS:
            raise _invalid(f"{json.dumps(content)} is not a reaction's content.", docs)
        reactions = [
            self._reaction_json(r)
            for r in repo.reactions.get(comment.id, [])
            if content is None or r.content == content
        ]
        return self._page(request, reactions)

    def _react(self, request: _Request, repo: _Repo, comment_id: int, docs: str) -> _Answer:
        body = _object_body(request, docs)
        content = body.get("content")
        if content is None:
            raise _invalid('"content" wasn\'t supplied.', docs)
        if content not in REACTIONS:
            raise _invalid(
                f"For 'properties/content', {json.dumps(content)} is not one of "
                f"{json.dumps(list(REACTIONS))}.",
                docs,
            )
        bot = f"{self.app_slug}[bot]"
        reaction, created = self._add_reaction(repo, comment_id, content, bot, "Bot")
        # Documented: "A response with an HTTP 200 status means that you already added the
        # reaction type to this issue comment."
        return _Answer(201 if created else 200, self._reaction_json(reaction))

    def _add_reaction(
        self, repo: _Repo, comment_id: int, content: str, user: str, user_type: str
    ) -> tuple[_Reaction, bool]:
        """The user's reaction of this content to the comment, and whether it is new."""
        reactions = repo.reactions.setdefault(comment_id, [])
        existing = next((r for r in reactions if (r.user, r.content) == (user, content)), None)
        if existing is not None:
            return existing, False
        reaction = _Reaction(next(self._ids), content, user, user_type, _now())
        reactions.append(reaction)
        return reaction, True

    def _reaction_json(self, reaction: _Reaction) -> dict[str, Any]:
        return {
            "id": reaction.id,
            "node_id": f"REA_{reaction.id}",
            "user": _user(reaction.user, reaction.user_type, self._user_id(reaction.user)),
            "content": reaction.content,
            "created_at": reaction.created_at,
        }

    def _rollup(self, repo: _Repo, comment_id: int, url: str) -> dict[str, Any]:
        contents = [r.content for r in repo.reactions.get(comment_id, [])]
        return {
            "url": url,
            "total_count": len(contents),
            **{content: contents.count(content) for content in REACTIONS},
        }

    # -- review comments ----------------------------------------------------------------------

    def _review_comment_by_id(
        self, repo: _Repo, comment_id: str, docs: str
    ) -> tuple[_Pull, ReviewComment]:
        found = self._find_review_comment(repo, int(comment_id))
        if found is None:
            raise _not_found(docs)
        return found

    def _find_review_comment(
        self, repo: _Repo, comment_id: int
    ) -> tuple[_Pull, ReviewComment] | None:
        for (base, _), pull in self._pulls.items():
            if base != repo.full_name.lower():
                continue
            for comment in pull.comments:
                if comment.id == comment_id:
                    return pull, comment
        return None

    def _thread_root(self, pull: _Pull, comment_id: int) -> ReviewComment | None:
        comment = next((c for c in pull.comments if c.id == comment_id), None)
        if comment is None or comment.in_reply_to is None:
            return comment
        return next(c for c in pull.comments if c.id == comment.in_reply_to)

    def _existing_root(self, pull: _Pull, full_name: str, comment_id: int) -> int:
        """The first comment of `comment_id`'s thread; KeyError for a comment it lacks."""
        root = self._thread_root(pull, comment_id)
        if root is None:
            raise KeyError(f"no review comment {comment_id} on {full_name}#{pull.number}")
        return root.id

    def _reply(
        self, pull: _Pull, root: ReviewComment, body: str, author: str, author_type: str
    ) -> ReviewComment:
        # A reply takes its thread's place in the diff, as on GitHub.
        reply = ReviewComment(
            id=next(self._ids),
            path=root.path,
            body=body,
            line=root.line,
            side=root.side,
            start_line=root.start_line,
            start_side=root.start_side,
            position=root.position,
            author=author,
            author_type=author_type,
            in_reply_to=root.id,
            review_id=next(self._ids),
            commit_id=root.commit_id,
            diff_hunk=root.diff_hunk,
            created_at=_now(),
        )
        pull.comments.append(reply)
        return reply

    def _get_review_comment(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        docs = f"{_REVIEW_COMMENTS_DOCS}#get-a-review-comment-for-a-pull-request"
        pull, comment = self._review_comment_by_id(repo, params["id"], docs)
        return _Answer(200, self._review_comment_json(repo, pull, comment))

    def _update_review_comment(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        docs = f"{_REVIEW_COMMENTS_DOCS}#update-a-review-comment-for-a-pull-request"
        pull, comment = self._review_comment_by_id(repo, params["id"], docs)
        if comment.author != f"{self.app_slug}[bot]":
            # The fake's rule, as for conversation comments: the App edits only its own.
            raise _error(403, NOT_ACCESSIBLE, docs)
        comment.body = _comment_body(request, "PullRequestReviewComment", docs)
        comment.updated_at = _now()
        return _Answer(200, self._review_comment_json(repo, pull, comment))

    def _list_review_comments(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        pull = self._pull(repo, params["number"])
        return self._page(
            request, [self._review_comment_json(repo, pull, c) for c in pull.comments]
        )

    def _create_reply(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_REVIEW_COMMENTS_DOCS}#create-a-reply-for-a-review-comment"
        pull = self._pull(repo, params["number"])
        comment = next((c for c in pull.comments if c.id == int(params["id"])), None)
        if comment is None:
            raise _not_found(docs)
        text = _comment_body(request, "PullRequestReviewComment", docs)
        if comment.in_reply_to is not None:
            raise _unprocessable([REPLY_TO_REPLY], docs)
        reply = self._reply(pull, comment, text, f"{self.app_slug}[bot]", "Bot")
        return _Answer(201, self._review_comment_json(repo, pull, reply))

    def _review_comment_json(
        self, repo: _Repo, pull: _Pull, comment: ReviewComment
    ) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}"
        url = f"{api}/pulls/comments/{comment.id}"
        html = f"https://github.com/{repo.full_name}/pull/{pull.number}#discussion_r{comment.id}"
        pull_url = f"{api}/pulls/{pull.number}"
        entry = next((f for f in pull.files if f["filename"] == comment.path), None)
        lines = _diff_lines(entry.get("patch", "")) if entry else []
        placed = _find_line(lines, comment.side or "RIGHT", comment.line)
        position = placed.position if placed else comment.position
        answer: dict[str, Any] = {
            "url": url,
            "pull_request_review_id": comment.review_id,
            "id": comment.id,
            "node_id": f"PRRC_{comment.id}",
            "diff_hunk": comment.diff_hunk,
            "path": comment.path,
            "position": position,
            "original_position": position,
            "commit_id": comment.commit_id,
            "original_commit_id": comment.commit_id,
            "user": _user(comment.author, comment.author_type, self._user_id(comment.author)),
            "body": comment.body,
            "created_at": comment.created_at,
            "updated_at": comment.updated_at or comment.created_at,
            "html_url": html,
            "pull_request_url": pull_url,
            "author_association": self._association(repo, comment.author),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": pull_url},
            },
            "start_line": comment.start_line,
            "original_start_line": comment.start_line,
            "start_side": comment.start_side,
            "line": comment.line,
            "original_line": comment.line,
            "side": comment.side,
            "subject_type": "line",
            "reactions": self._rollup(repo, comment.id, f"{url}/reactions"),
        }
        if comment.in_reply_to is not None:
            answer["in_reply_to_id"] = comment.in_reply_to
        return answer


def _comment_body(request: _Request, resource: str, docs: str) -> str:
    body = _object_body(request, docs)
    text = body.get("body")
    if not isinstance(text, str):
        raise _invalid('"body" wasn\'t supplied.', docs)
    if len(text) > MAX_COMMENT_BODY:
        # As GitHub answers it today (an older answer had field "body", code "custom").
        raise _error(
            422,
            "Validation Failed",
            docs,
            [
                {
                    "resource": resource,
                    "code": "unprocessable",
                    "field": "data",
                    "message": BODY_TOO_LONG,
                }
            ],
        )
    return text
