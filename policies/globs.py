"""Gitignore-style globs: checked when a config is read, matched in time linear in the path.

Every glob Tiebreak matches goes through here: a repository config's `paths`,
`path_instructions`, `debate.protected_paths` and `ignore`'s branches, the paths no patch may
touch, and `ignore.title_patterns`, wildcards matched against a pull request's whole title.
A config is written by whoever owns the repository, its globs meet the paths of an untrusted
diff, and one process serves every installation. A backtracking matcher (Python's `re`)
takes seconds on `*a*a*a*a*a*a*a*a*a*ab` against a name of forty `a`s, and three times as
long for each further `*a`; RE2, pathspec's `re2` backend, reads a path once, in time linear
in its length whatever the globs. The backend is named rather than left to pathspec's choice
and `re2` is imported here, so that a server without `google-re2` fails to start instead of
falling back to backtracking.
"""

import functools
import re
from collections.abc import Sequence

import re2
from pathspec import GitIgnoreSpec
from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

MAX_GLOB_CHARS = 200
"""Characters of one glob; a path glob is rarely a tenth of it."""
MAX_WILDCARDS = 8
"""Wildcards of one glob (`*` or `**`, `?`, a bracket expression); a path glob rarely has
four. Each can double the states RE2 tracks for a character of a path: against a path of
4,000 characters, `*a` then 190 `?`s took 100 ms to match, then 15 `?`s 23 ms, 7 a few."""
MAX_GLOBS = 100
"""Globs of one list. With the bounds above, this bounds the automaton a list compiles to,
and so the cost of each character of a path matched against it."""
_WILDCARD = re.compile(r"\*+|\?|\[")

_BACKEND = "re2"
_CHARACTER_CLASS = re.compile(r"\[:[a-z]+:\]")
_UNUSABLE = (ValueError, re.error, re2.error)
"""What compiling a glob raises: pathspec's `GitIgnorePatternError` (a `ValueError`) for a
pattern git does not read (a trailing `\\`), `re.error` for a bad range (`[z-a]`), and
`re2.error` for a bracket expression RE2 does not read or globs too large for its memory
budget."""


class CompiledGlobs:
    """Paths matched by any of some gitignore-style globs."""

    def __init__(self, spec: GitIgnoreSpec) -> None:
        self._spec = spec

    def match(self, path: str) -> bool:
        return bool(self._spec.match_file(path))


def compiled(globs: Sequence[str]) -> CompiledGlobs:
    """`globs` ready to match, compiled once per distinct list: a review's units, and the
    reviews of one repository, share them. Raises ValueError, naming the glob, for a glob
    that does not compile."""
    try:
        return _compiled(tuple(globs))
    except _UNUSABLE as exc:
        raise ValueError(_unusable(tuple(globs), exc)) from exc


def plain_globs(globs: Sequence[str]) -> Sequence[str]:
    """`globs` as given, once they compile, refusing empty patterns and `!` negations, which
    could carve exceptions out of other patterns (out of the protected workflows, say).
    Raises ValueError for the first glob refused."""
    if len(globs) > MAX_GLOBS:
        raise ValueError(f"a list of globs may hold at most {MAX_GLOBS}, not {len(globs)}")
    if refused := glob_problems(globs):
        raise ValueError(refused[0][1])
    compiled(globs)
    return globs


def listed_globs(globs: Sequence[str]) -> Sequence[str]:
    """:func:`plain_globs` as a config's list is validated: every glob refused is an error of
    its own, at its index in the list (and so on its own line of the file)."""
    if refused := glob_problems(globs[:MAX_GLOBS]):
        raise ValidationError.from_exception_data(
            "globs",
            [
                InitErrorDetails(
                    type=PydanticCustomError("glob", "{reason}", {"reason": reason}),
                    loc=(index,),
                    input=globs[index],
                )
                for index, reason in refused
            ],
        )
    return plain_globs(globs)


def glob_problems(globs: Sequence[str]) -> list[tuple[int, str]]:
    """Each glob of `globs` refused on its own, by its index, and why."""
    refused = ((i, _glob_problem(glob)) for i, glob in enumerate(globs))
    return [(i, reason) for i, reason in refused if reason is not None]


# Cached: every record that holds a config (a review's plan, read by each of its units) checks
# its globs again as it is read, and compiling one to check it costs more than the read.
@functools.lru_cache(maxsize=1_024)
def _glob_problem(glob: str) -> str | None:
    if not glob.strip():
        return "a glob may not be empty"
    if len(glob) > MAX_GLOB_CHARS:
        return f"{_shown(glob)} is longer than {MAX_GLOB_CHARS} characters"
    if len(_WILDCARD.findall(glob)) > MAX_WILDCARDS:
        return f"{_shown(glob)} has more than {MAX_WILDCARDS} wildcards"
    if glob.lstrip().startswith("!"):
        return f"{_shown(glob)}: negated globs are not supported; list what to match"
    if _CHARACTER_CLASS.search(glob):
        # pathspec does not translate them as git reads them, and its backtracking and RE2
        # backends each read its translation differently.
        return (
            f"{_shown(glob)}: character classes such as [:digit:] are not supported; "
            "list the characters ([0-9])"
        )
    try:
        _compile((glob,))
    except _UNUSABLE as alone:
        return f"{_shown(glob)} is not a glob Tiebreak can match: {_reason(alone)}"
    return None


def _compile(globs: tuple[str, ...]) -> CompiledGlobs:
    return CompiledGlobs(GitIgnoreSpec.from_lines(globs, backend=_BACKEND))


# Cached: each unit's debate checks its patches against the same few lists (the default
# protected paths, a repository's), each review filters its files and picks its
# instructions with its config's, and a compile costs more than many matches. An entry
# holds at most RE2's memory budget (8 MiB), its automaton's states included; an ordinary
# list, a few KiB.
_compiled = functools.lru_cache(maxsize=64)(_compile)


def _unusable(globs: tuple[str, ...], exc: Exception) -> str:
    """Which of `globs` does not compile, and why."""
    for glob in globs:
        try:
            _compile((glob,))
        except _UNUSABLE as alone:
            return f"{_shown(glob)} is not a glob Tiebreak can match: {_reason(alone)}"
    return f"these {len(globs)} globs are more than Tiebreak can match at once: {_reason(exc)}"


def _shown(glob: str) -> str:
    return repr(glob if len(glob) <= 80 else glob[:80] + "…")


def _reason(exc: Exception) -> str:
    if isinstance(exc, re.error):
        return exc.msg
    if isinstance(exc, re2.error):
        return "too large, or a bracket expression RE2 does not read"
    return "git does not read it as a pattern (a trailing `\\`?)"


class CompiledTitles:
    """Titles matched, whole and case-insensitively, by any of some `*`/`?` patterns."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self._patterns = [(p, re2.compile(_title_regex(p))) for p in patterns]

    def first_match(self, title: str) -> str | None:
        """The first pattern matching `title`, if one does."""
        return next((p for p, regex in self._patterns if regex.fullmatch(title)), None)


def title_patterns(patterns: Sequence[str]) -> Sequence[str]:
    """`patterns` as given, once each is a pattern of a title Tiebreak can match: `*` for
    any text, `?` for one character, anything else (brackets included) itself."""
    if len(patterns) > MAX_GLOBS:
        raise ValueError(f"a list of patterns may hold at most {MAX_GLOBS}, not {len(patterns)}")
    for pattern in patterns:
        if not pattern.strip():
            raise ValueError("a pattern may not be empty")
        if len(pattern) > MAX_GLOB_CHARS:
            raise ValueError(f"{_shown(pattern)} is longer than {MAX_GLOB_CHARS} characters")
        if len(re.findall(r"\*+|\?", pattern)) > MAX_WILDCARDS:
            raise ValueError(f"{_shown(pattern)} has more than {MAX_WILDCARDS} wildcards")
    return patterns


@functools.lru_cache(maxsize=64)
def compiled_titles(patterns: tuple[str, ...]) -> CompiledTitles:
    return CompiledTitles(patterns)


def _title_regex(pattern: str) -> str:
    # Titles are prose: brackets (`[WIP]`) are themselves, not a set of characters.
    parts = re.split(r"(\*+|\?)", pattern)
    regex = "".join(
        ".*" if part.startswith("*") else "." if part == "?" else re.escape(part) for part in parts
    )
    return f"(?is){regex}"
