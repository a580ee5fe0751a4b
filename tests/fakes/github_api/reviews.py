"""The fake GitHub's pull request reviews: creating one places each comment on the pull
request's diff (a path, a line on its side, a range within one hunk, or a diff position)
and refuses the whole review with GitHub's own error strings when one cannot be placed, a
verdict says nothing, the commit is not one of the pull request's heads, or a pending
review is open.
"""

import json
from typing import Any

from tests.fakes.github_api.base import _Base, _user
from tests.fakes.github_api.constants import (
    _REVIEWS_DOCS,
    COMMIT_NOT_IN_PULL,
    HUNK_BLANK,
    LINE_NOT_IN_DIFF,
    LINE_UNRESOLVED,
    NEEDS_COMMENT,
    ONE_PENDING_REVIEW,
    PATH_INVALID,
    POSITION_INVALID,
    REVIEW_STATES,
    START_NOT_BEFORE_LINE,
    START_NOT_IN_HUNK,
)
from tests.fakes.github_api.diffs import _diff_hunk, _diff_lines, _find_line
from tests.fakes.github_api.records import Review, ReviewComment
from tests.fakes.github_api.state import (
    _Answer,
    _invalid,
    _now,
    _object_body,
    _Pull,
    _Repo,
    _Request,
    _unprocessable,
)


class _Reviews(_Base):
    """The reviews endpoints."""

    def _list_reviews(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        return self._page(request, [self._review_json(repo, pull, r) for r in pull.reviews])

    def _create_review(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        body = _object_body(request, _REVIEWS_DOCS)
        if any(r.state == "PENDING" for r in pull.reviews):
            raise _unprocessable([ONE_PENDING_REVIEW], _REVIEWS_DOCS)
        event = body.get("event")
        if event is not None and event not in REVIEW_STATES:
            raise _invalid(
                f"For 'properties/event', {json.dumps(event)} is not one of "
                f"{json.dumps(list(REVIEW_STATES))}.",
                _REVIEWS_DOCS,
            )
        text = body.get("body", "")
        if not isinstance(text, str):
            raise _invalid(
                f"For 'properties/body', {json.dumps(text)} is not a string.", _REVIEWS_DOCS
            )
        commit_id = body.get("commit_id") or pull.head_sha
        if commit_id not in pull.heads:
            raise _unprocessable([COMMIT_NOT_IN_PULL], _REVIEWS_DOCS)
        raw_comments = body.get("comments") or []
        if not isinstance(raw_comments, list):
            raise _invalid("For 'properties/comments', it is not an array.", _REVIEWS_DOCS)
        # A verdict needs something said: a body, or at least one inline comment.
        if event in ("COMMENT", "REQUEST_CHANGES") and not text.strip() and not raw_comments:
            raise _unprocessable([NEEDS_COMMENT], _REVIEWS_DOCS)
        files = {f["filename"]: f for f in pull.files}
        # GitHub refuses the whole review when any one comment cannot be placed.
        comments = [self._review_comment(files, c) for c in raw_comments]
        author, author_type = self._poster(request)
        review = Review(
            id=next(self._ids),
            number=pull.number,
            body=text,
            event=event,
            state=REVIEW_STATES[event] if event else "PENDING",
            commit_id=commit_id,
            comments=comments,
            submitted_at=_now() if event else None,
            # Whatever an installation posts, GitHub shows as written by the App's bot user;
            # what a person's token posts, as written by that person.
            author=author,
            author_type=author_type,
        )
        for comment in comments:
            comment.author = author
            comment.review_id = review.id
            comment.commit_id = commit_id
            comment.created_at = _now()
        pull.reviews.append(review)
        # The same objects: a review's comments are among the pull request's.
        pull.comments.extend(comments)
        return _Answer(200, self._review_json(repo, pull, review))

    def _review_comment(self, files: dict[str, dict[str, Any]], raw: Any) -> ReviewComment:
        if not isinstance(raw, dict):
            raise _invalid("For 'items', it is not an object.", _REVIEWS_DOCS)
        for key in ("path", "body"):
            if not isinstance(raw.get(key), str):
                raise _invalid(f'"{key}" wasn\'t supplied.', _REVIEWS_DOCS)
        path: str = raw["path"]
        entry = files.get(path)
        if entry is None:
            raise _unprocessable([PATH_INVALID, HUNK_BLANK], _REVIEWS_DOCS)
        lines = _diff_lines(entry.get("patch", ""))
        comment = ReviewComment(
            id=next(self._ids),
            path=path,
            body=raw["body"],
            line=None,
            side=None,
            start_line=None,
            start_side=None,
            position=None,
        )
        if raw.get("line") is None:
            position = raw.get("position")
            if position is None:
                raise _unprocessable([LINE_UNRESOLVED], _REVIEWS_DOCS)
            placed = next((d for d in lines if d.position == position), None)
            if placed is None:
                raise _unprocessable([POSITION_INVALID, HUNK_BLANK], _REVIEWS_DOCS)
            comment.position = position
            comment.side = "RIGHT" if placed.right is not None else "LEFT"
            comment.line = placed.right if placed.right is not None else placed.left
            comment.diff_hunk = _diff_hunk(entry.get("patch", ""), placed.position)
            return comment
        side = raw.get("side") or "RIGHT"
        start_side = raw.get("start_side") or side
        for key, value in (("side", side), ("start_side", start_side)):
            if value not in ("LEFT", "RIGHT"):
                raise _invalid(
                    f"For 'properties/{key}', {json.dumps(value)} is not one of "
                    '["LEFT", "RIGHT"].',
                    _REVIEWS_DOCS,
                )
        end = _find_line(lines, side, raw["line"])
        if end is None:
            raise _unprocessable([LINE_NOT_IN_DIFF, HUNK_BLANK], _REVIEWS_DOCS)
        comment.line, comment.side = raw["line"], side
        comment.diff_hunk = _diff_hunk(entry.get("patch", ""), end.position)
        if raw.get("start_line") is not None:
            start = _find_line(lines, start_side, raw["start_line"])
            if start is None or start.hunk != end.hunk:
                raise _unprocessable([START_NOT_IN_HUNK], _REVIEWS_DOCS)
            if start.position >= end.position:
                raise _unprocessable([START_NOT_BEFORE_LINE], _REVIEWS_DOCS)
            comment.start_line, comment.start_side = raw["start_line"], start_side
        return comment

    def _review_json(self, repo: _Repo, pull: _Pull, review: Review) -> dict[str, Any]:
        pull_url = f"{self.base_url}/repos/{repo.full_name}/pulls/{pull.number}"
        html = (
            f"https://github.com/{repo.full_name}/pull/{pull.number}#pullrequestreview-{review.id}"
        )
        answer: dict[str, Any] = {
            "id": review.id,
            "node_id": f"PRR_{review.id}",
            "user": _user(review.author, review.author_type, self._user_id(review.author)),
            "body": review.body,
            "state": review.state,
            "html_url": html,
            "pull_request_url": pull_url,
            "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
            "commit_id": review.commit_id,
            "author_association": "NONE",
        }
        if review.submitted_at is not None:
            answer["submitted_at"] = review.submitted_at
        return answer
