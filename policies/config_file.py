"""A config file's text read as YAML within bounds, and what is wrong with it, line by line.

Tiebreak's config files (a repository's `.github/tiebreak.yml`, its organisation's defaults)
are written by people and read by a process serving every installation: the reading here
refuses a file too large, too deeply nested or with too many values once aliases are
expanded, and turns whatever PyYAML cannot read into a :class:`ConfigProblem` on its line.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

MAX_CONFIG_BYTES = 64 * 1024
"""A larger config file is refused unread."""
MAX_CONFIG_NODES = 10_000
"""Values a config may hold once its aliases are expanded: a few aliases of aliases could
otherwise stand for billions."""
MAX_CONFIG_DEPTH = 32
"""Levels a config's values may nest; PyYAML recurses once per level while reading."""


@dataclass(frozen=True)
class ConfigProblem:
    """Something wrong with a config file, and the line it is on (1-based) when known."""

    message: str
    line: int | None = None
    warning: bool = False
    """Only a warning: the config is read as written."""
    source: str | None = None
    """The file, when it is not the repository's own `.github/tiebreak.yml`: the
    organisation's defaults (`acme/.github:tiebreak.yml`)."""

    def __str__(self) -> str:
        said = f"warning: {self.message}" if self.warning else self.message
        where = " ".join(w for w in (self.source, f"line {self.line}" if self.line else "") if w)
        return f"{where}: {said}" if where else said


@dataclass(frozen=True)
class Document:
    """A config file as read: its values (None for an empty file or one unreadable), the
    nodes they were read from (for lines), and what is wrong with it."""

    values: dict[Any, Any] | None
    root: yaml.Node | None
    problems: list[ConfigProblem]
    """What is wrong with the file as YAML (its values, if any, are still checked)."""


def undecodable(data: bytes) -> ConfigProblem | None:
    """What is wrong with a config file's bytes as UTF-8, naming the first byte that is not
    (a file saved in Latin-1, say), with its offset and line; None when they are UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        said = f"the file is not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} is not"
        return ConfigProblem(f"{said} UTF-8 text", line)
    return None


def read_document(text: str) -> Document:
    """`text` read as a mapping of options, within the bounds above."""
    if len(text.encode()) > MAX_CONFIG_BYTES:
        return _refused(f"the file is larger than {MAX_CONFIG_BYTES:,} bytes")
    try:
        root = yaml.compose(text, Loader=_Loader)
        # Before the document is built: building expands merge keys (`<<: [*a, *a]`), which
        # a few lines can make exponential.
        if _expanded_size(root) > MAX_CONFIG_NODES:
            return _refused(f"the file holds more than {MAX_CONFIG_NODES:,} values")
        values = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        reason = " ".join(str(getattr(exc, "problem", None) or exc).split())
        return _refused(f"the file is not valid YAML: {reason}", _clamped(mark, text))
    if values is None or root is None:
        return Document(None, None, [])
    if not isinstance(values, dict):
        return _refused("the file must be a mapping of options", root.start_mark.line + 1)
    problems = [
        ConfigProblem(f"{dotted(path)} is set twice", node.start_mark.line + 1)
        for path, node in _duplicates(root, ())
    ]
    return Document(values, root, problems)


def _refused(message: str, line: int | None = None) -> Document:
    return Document(None, None, [ConfigProblem(message, line)])


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing values nested deeper than :data:`MAX_CONFIG_DEPTH`
    and turning a scalar it cannot build (`2001-13-01`, `!!int x`, an integer of 5,000
    digits) into a YAML error on its line: both would otherwise escape as a `RecursionError`
    or a `ValueError`, and a config file must never break a review."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self._depth >= MAX_CONFIG_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, f"values nest more than {MAX_CONFIG_DEPTH} levels deep", mark
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except ValueError as exc:
            raise yaml.constructor.ConstructorError(None, None, str(exc), node.start_mark) from exc


def _clamped(mark: yaml.Mark | None, text: str) -> int | None:
    """The 1-based line of `mark`, which PyYAML may put just past the last line (an unclosed
    bracket): an annotation must sit on a line the file has."""
    if mark is None:
        return None
    return max(1, min(mark.line + 1, len(text.splitlines())))


def dotted(loc: Sequence[Any]) -> str:
    return ".".join(str(p) for p in loc) or "the file"


def line_of(node: yaml.Node | None, loc: Sequence[Any]) -> int | None:
    """The line of the deepest key or item along `loc` that the file has: a key's own line,
    not its value's, which may start lines below it."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == key), None)
            at, node = pair or (None, None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            at = node = node.value[key] if key < len(node.value) else None
        else:
            at = node = None
        if at is None:
            break
        line = at.start_mark.line + 1
    return line


def _expanded_size(root: yaml.Node | None) -> int:
    """How many nodes the document has with its aliases expanded, counting no further than
    just past :data:`MAX_CONFIG_NODES`."""
    count, stack = 0, [root] if root is not None else []
    while stack and count <= MAX_CONFIG_NODES:
        node = stack.pop()
        count += 1
        if isinstance(node, yaml.MappingNode):
            stack += [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
    return count


def _duplicates(node: yaml.Node | None, path: tuple[Any, ...]) -> Iterator[tuple[Any, yaml.Node]]:
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key, value in node.value:
            if key.value in seen:
                yield (*path, key.value), key
            seen.add(key.value)
            yield from _duplicates(value, (*path, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _duplicates(item, (*path, i))
