"""Markdown for GitHub: untrusted text made inert, and a review's findings rendered in it.

Models write the claims, arguments and rulings; a pull request's author writes the paths.
None of it may act on the page. Model text cannot ping anyone (an @mention gets a zero-width
joiner), cannot open a code fence, HTML block or comment that swallows what follows (fences
are re-emitted closed, `<` is escaped), and cannot forge a committable suggestion or
Tiebreak's hidden run marker. Inline code survives as `<code>` with its punctuation encoded
as character references, so it still renders as code but cannot be read as Markdown or HTML.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agents.outcome import Consensus, FindingOutcome, Message, MessageKind, Resolution
from agents.protocol import Severity
from agents.review import Review
from policies.arbitration import ArbitrationTrigger

LIMIT = 65_535
"""GitHub's limit on a check run's summary and text, and on a comment's body."""

PROSE_LIMIT = 4_000
"""Characters of one piece of model text shown in a comment: keeps every comment readable
and, with the longest possible suggestion, under :data:`LIMIT`."""

ZWJ = "\u200d"

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_TILDES = re.compile(r"~(?=~~)")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_INFO = re.compile(r"[A-Za-z0-9_+#.-]{1,30}")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# Everything Markdown, GFM or GitHub's filters could read inside a `<code>` element.
_ENCODED = frozenset("&<>`*_[]\\|~$@")


def clip(text: str, limit: int) -> str:
    """`text`, cut to at most `limit` characters with an ellipsis where it was cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def one_line(text: str, limit: int) -> str:
    """`text` on one line, clipped: for titles, table cells and list items."""
    return clip(" ".join(text.split()), limit)


def code(text: str) -> str:
    """`text` as inline code that nothing inside can break out of (paths, shas)."""
    return f"<code>{_encode(' '.join(text.splitlines()))}</code>"


def code_block(lines: Sequence[str], info: str = "") -> str:
    """A fenced block holding exactly `lines`: the fence outruns every backtick run inside."""
    content = "\n".join(lines)
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{content}\n{fence}" if lines else f"{fence}{info}\n{fence}"


def replacement_lines(replacement: str) -> list[str]:
    """A patch's replacement as lines, split as the engine splits it (see agents.patches)."""
    if not replacement:
        return []
    return [line.removesuffix("\r") for line in replacement.removesuffix("\n").split("\n")]


def suggestion(replacement: str) -> str:
    """A committable suggestion that replaces the commented lines with `replacement`."""
    return code_block(replacement_lines(replacement), "suggestion")


def prose(text: str, limit: int = PROSE_LIMIT) -> str:
    """Model text as Markdown paragraphs that stay inside their own block."""
    text = clip(text.replace("\r\n", "\n").replace("\r", "\n").strip("\n"), limit)
    lines = text.split("\n")
    out: list[str] = []
    plain: list[str] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None or (opening[2][0] == "`" and "`" in opening[3]):
            plain.append(lines[i])
            i += 1
            continue
        indent, fence = len(opening[1]), opening[2]
        close = _closing_fence(lines, i + 1, fence)
        if plain:
            out.append(_paragraphs("\n".join(plain)))
            plain = []
        # Re-emitted at column 0 with our own fence: closed even if the model never closed
        # it, and its info string can never be `suggestion`.
        body = [_dedent(line, indent) for line in lines[i + 1 : close]]
        out.append(code_block(body, _safe_info(opening[3])))
        i = close + 1
    if plain:
        out.append(_paragraphs("\n".join(plain)))
    return "\n".join(out)


def inline(text: str, limit: int) -> str:
    """Model text on one line, for a list item: no blocks at all."""
    return _inline(one_line(text, limit))


def cell(text: str) -> str:
    """Our own text made safe as one GFM table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def fit(pieces: Sequence[str], limit: int, note: Callable[[int], str]) -> str:
    """Join `pieces`, dropping trailing ones whole until the result and `note(cut)` fit.

    Each piece must end where Markdown may be cut: after a closed block or a table row.
    `note` is given how many characters were cut and must say so.
    """
    whole = "".join(pieces)
    if len(whole) <= limit:
        return whole
    # The longest note is the one for cutting everything: reserving it is always enough.
    room = limit - len(note(len(whole)))
    kept: list[str] = []
    size = 0
    for piece in pieces:
        if size + len(piece) > room:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept) + note(len(whole) - size)


def _closing_fence(lines: Sequence[str], start: int, fence: str) -> int:
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    return next((j for j in range(start, len(lines)) if closing.match(lines[j])), len(lines))


def _dedent(line: str, indent: int) -> str:
    stripped = line.lstrip(" ")
    return line[min(indent, len(line) - len(stripped)) :]


def _safe_info(info: str) -> str:
    words = info.split()
    language = words[0] if words else ""
    if not _INFO.fullmatch(language) or language.lower().startswith("suggestion"):
        return ""
    return language


def _paragraphs(text: str) -> str:
    # A code span never crosses a blank line, so each paragraph is scanned on its own.
    pieces = _BLANK_LINE.split(text)
    return "\n\n".join(_inline(p) for p in pieces)


def _inline(text: str) -> str:
    """Code spans become encoded `<code>`; the rest is escaped where it could do harm."""
    out: list[str] = []
    plain: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n and text[i + 1] in _PUNCTUATION:
            # Escaped punctuation renders literally; keep the pair as it is.
            plain.append(text[i : i + 2])
            i += 2
            continue
        if char != "`":
            plain.append("&lt;" if char == "<" else char)
            i += 1
            continue
        run = len(text[i:]) - len(text[i:].lstrip("`"))
        closing = _closing_run(text, i + run, run)
        if closing is None:
            plain.append("&#96;" * run)
            i += run
            continue
        out.append(_neutralise("".join(plain)))
        plain = []
        out.append(code(text[i + run : closing].strip(" ") or " "))
        i = closing + run
    out.append(_neutralise("".join(plain)))
    return "".join(out)


def _closing_run(text: str, start: int, length: int) -> int | None:
    for match in re.finditer(r"`+", text[start:]):
        if len(match.group()) == length:
            return start + match.start()
    return None


def _neutralise(text: str) -> str:
    return _TILDES.sub("&#126;", _MENTION.sub("@" + ZWJ, text))


def _encode(text: str) -> str:
    return "".join(f"&#{ord(c)};" if c in _ENCODED else c for c in text)


# -- a review in Markdown -----------------------------------------------------------------------

SEVERITY = {
    Severity.BLOCKER: "🔴 Blocker",
    Severity.MAJOR: "🟠 Major",
    Severity.MINOR: "🟡 Minor",
    Severity.NIT: "⚪ Nit",
}
RESOLUTION = {
    Resolution.FIXED: "fix suggested",
    Resolution.WARNING: "accepted with a warning",
    Resolution.WITHDRAWN: "withdrawn",
    Resolution.OPEN: "unresolved",
}
TRIGGER = {
    ArbitrationTrigger.LOOP: "the debate went in circles",
    ArbitrationTrigger.BUDGET: "the debate's token budget ran out",
    ArbitrationTrigger.EXCHANGE_LIMIT: "too many exchanges on this finding",
    ArbitrationTrigger.CONVERGED: "the debate stopped making progress",
    ArbitrationTrigger.ROUND_LIMIT: "the round limit was reached",
    ArbitrationTrigger.CEILING: "the review's token ceiling was reached",
}
_TALLY = {
    Resolution.FIXED: "with a suggested fix",
    Resolution.WITHDRAWN: "withdrawn",
    Resolution.WARNING: "accepted with a warning",
    Resolution.OPEN: "unresolved",
}
_AGREEMENT = {
    Consensus.UNANIMOUS: "tester and coder agreed",
    Consensus.MAJORITY: "a majority of the testers agreed",
    Consensus.ARBITER: "the arbiter ruled",
    Consensus.UNRESOLVED: "no agreement",
}
_CODER = (MessageKind.CONCEDE, MessageKind.DISPUTE)


@dataclass(frozen=True)
class Entry:
    """One finding as it is published."""

    label: str
    """The finding's id, qualified by its unit when the review has several."""
    result: FindingOutcome
    thread: tuple[Message, ...]
    anchor: tuple[str, int, int]
    """Where its inline comment sits (path, start, end): on its fix's lines, if it has one."""
    inline: bool
    """Whether it is posted as an inline comment."""
    outside: str | None = None
    """Why the anchor cannot take an inline comment, when it cannot: `<anchor> {outside}`."""


def location(path: str, start: int, end: int) -> str:
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


def marker(run_id: str) -> str:
    return f"<!-- tiebreak:run:{run_id} -->"


def agreement(result: FindingOutcome) -> str:
    """Who settled the finding, and why the arbiter was called if it was."""
    text = _AGREEMENT[result.consensus]
    if result.trigger is not None and result.consensus is not Consensus.UNANIMOUS:
        text += f" ({TRIGGER[result.trigger]})"
    return text


def comment_body(entry: Entry) -> str:
    """The inline review comment for a finding: its debate and, if fixed, a suggestion."""
    result = entry.result
    header = f"**{SEVERITY[result.finding.severity]}** · {RESOLUTION[result.resolution]} · "
    blocks = [header + agreement(result), *_debate(entry, committable=True), _footer(entry)]
    return "\n\n".join(blocks)


def section(entry: Entry) -> str:
    """A finding in full, for a review body or a check run's text: no suggestion block."""
    result, finding = entry.result, entry.result.finding
    where = code(location(finding.path, finding.start_line, finding.end_line))
    blocks = [
        f"#### {entry.label} · {SEVERITY[finding.severity]} · "
        f"{RESOLUTION[result.resolution]} · {where}",
        f"_{agreement(result)} · {_rounds(result)} · {result.tokens:,} billed tokens_",
    ]
    if entry.outside:
        blocks.append(f"Not posted inline: {code(location(*entry.anchor))} {entry.outside}.")
    blocks += _debate(entry, committable=False)
    return "\n\n".join(blocks) + "\n\n"


def withdrawn_line(entry: Entry) -> str:
    finding = entry.result.finding
    where = code(location(finding.path, finding.start_line, finding.end_line))
    argument = _last(entry.thread, _CODER)
    why = f" — the coder: {inline(argument.text, 300)}" if argument and argument.text else ""
    return f"- **{entry.label}** {where} ({finding.severity}): {inline(finding.claim, 300)}{why}\n"


def table(entries: Sequence[Entry]) -> list[str]:
    """Every finding, one row each; each row is a piece that may be cut after."""
    rows = [
        "| Finding | Severity | Location | Resolution | Consensus | Rounds | Billed tokens "
        "| Where |\n|---|---|---|---|---|--:|--:|---|\n"
    ]
    for entry in entries:
        result, finding = entry.result, entry.result.finding
        how = str(result.consensus)
        if result.trigger is not None and result.consensus is not Consensus.UNANIMOUS:
            how += f" · {result.trigger.replace('_', ' ')}"
        where = "inline" if entry.inline else "below"
        rows.append(
            f"| {cell(entry.label)} | {SEVERITY[finding.severity]} "
            f"| {code(location(finding.path, finding.start_line, finding.end_line))} "
            f"| {RESOLUTION[result.resolution]} | {cell(how)} | {result.closed_in_round} "
            f"| {result.tokens:,} | {where} |\n"
        )
    return [*rows, "\n"]


def totals(review: Review) -> str:
    counts = dict.fromkeys(Resolution, 0)
    for result in review.findings:
        counts[result.resolution] += 1
    split = ", ".join(f"{n} {_TALLY[r]}" for r, n in counts.items() if n)
    by_role = " · ".join(f"{role} {u.billed:,}" for role, u in review.usage_by_role().items())
    text = (
        f"**{_count(len(review.findings), 'finding')}**{f' ({split})' if split else ''} · "
        f"{_count(len(review.units), 'unit')} · {_count(review.rounds, 'round')} · "
        f"{_count(review.calls, 'call')} ({review.failed_turns} failed) · "
        f"{review.usage.billed:,} billed tokens ({by_role or 'none'})"
    )
    dropped = sum(u.dropped_findings for u in review.units)
    if dropped:
        text += f" · {_count(dropped, 'finding')} over the proposal budget dropped"
    return text + "\n\n"


def failed_units(review: Review) -> list[str]:
    if not review.failed_units:
        return []
    lines = [
        f"- Unit {code(u.unit_id)}: {inline(u.error or 'no reason given', 500)}\n"
        for u in review.failed_units
    ]
    return [
        "#### Not reviewed\n\nThe tester could not review these parts of the diff, so they "
        "have no findings. Comment `/tiebreak review` to try again.\n\n",
        *lines,
        "\n",
    ]


def overview(
    review: Review, entries: Sequence[Entry], *, title: str, run_id: str, details_url: str | None
) -> list[str]:
    """The review at a glance: the marker, the verdict, every finding's row, the totals."""
    return [
        marker(run_id) + "\n",
        f"### Tiebreak: {title}\n\n",
        *([f"[The debate, message by message]({details_url})\n\n"] if details_url else []),
        *(table(entries) if entries else []),
        totals(review),
        *failed_units(review),
    ]


def not_inline(entries: Sequence[Entry]) -> list[str]:
    """What the review body adds to the overview: findings that have no inline comment."""
    withdrawn = [withdrawn_line(e) for e in entries if e.result.resolution is Resolution.WITHDRAWN]
    outside = [section(e) for e in entries if e.outside]
    pieces = ["#### Withdrawn\n\n", *withdrawn, "\n"] if withdrawn else []
    if outside:
        pieces += ["### Findings on lines outside the diff\n\n", *outside]
    return pieces


def every_finding(entries: Sequence[Entry]) -> list[str]:
    """A check run's text: every finding in full."""
    return ["## Every finding\n\n", *map(section, entries)] if entries else []


def failure(reason: str, *, run_id: str, sha: str, details_url: str | None) -> str:
    link = f"\n\n[What the run did]({details_url})" if details_url else ""
    return (
        f"{marker(run_id)}\n"
        f"Tiebreak could not finish its review of {code(sha[:7])}.\n\n"
        f"**What went wrong**\n{prose(reason or 'no reason was recorded')}\n\n"
        f"To try again, comment `/tiebreak review` on this pull request.{link}"
    )


def superseded(*, run_id: str, sha: str, newer: str | None) -> str:
    commit = f"A newer commit, {code(newer)}," if newer else "A newer commit"
    return (
        f"{marker(run_id)}\n"
        f"{commit} was pushed while Tiebreak was reviewing {code(sha[:7])}, so this review "
        "stopped. The newer commit gets a review of its own."
    )


def stopped(login: str, *, run_id: str, sha: str) -> str:
    return (
        f"{marker(run_id)}\n"
        f"{prose('@' + login)} stopped Tiebreak's review of {code(sha[:7])} with "
        "`/tiebreak stop`. Comment `/tiebreak review` to review it again."
    )


def resolved(login: str, summary: str) -> str:
    """A finished run's summary with a person's acceptance recorded on top of it."""
    return (
        f"**Resolved by {prose('@' + login)}**: the open findings below were accepted as they "
        f"are.\n\n{summary}"
    )


def disabled(*, run_id: str) -> str:
    return (
        f"{marker(run_id)}\n"
        "This repository's `.github/tiebreak.yml` (as of the pull request's base commit) sets "
        "`enabled: false`, so Tiebreak did not review this pull request."
    )


def truncation_note(details_url: str | None) -> Callable[[int], str]:
    rest = f" The whole debate: [the transcript]({details_url})." if details_url else ""

    def note(cut: int) -> str:
        return (
            f"\n\n---\n_Truncated: {cut:,} characters were cut to fit GitHub's limit of "
            f"{LIMIT:,} characters.{rest}_\n"
        )

    return note


def _debate(entry: Entry, *, committable: bool) -> list[str]:
    result, finding = entry.result, entry.result.finding
    blocks = [prose(finding.claim)]
    if finding.evidence.strip():
        blocks.append("**Evidence**\n" + prose(finding.evidence))
    ruling = _last(entry.thread, (MessageKind.RULING,))
    reasoning = ruling.text if ruling else ""
    tester = _last(entry.thread, (MessageKind.REJECT,))
    coder = _last(entry.thread, _CODER)
    match result.resolution:
        case Resolution.FIXED:
            blocks += _labelled("The arbiter's reasoning", reasoning)
            blocks += _fix(result, committable=committable)
        case Resolution.WARNING:
            blocks += _labelled("The arbiter's warning", result.warning or "")
            blocks += _labelled("The arbiter's reasoning", reasoning)
            blocks += _tester(tester, overruled=True)
            blocks += _labelled("The coder's argument", coder.text if coder else "")
        case Resolution.OPEN:
            blocks += _tester(tester, overruled=False)
            blocks += _coder(coder)
            blocks += _labelled("Why it is unresolved", result.note or "no agreement was reached")
        case Resolution.WITHDRAWN:
            blocks += _labelled("Withdrawn after the coder's argument", coder.text if coder else "")
    return blocks


def _fix(result: FindingOutcome, *, committable: bool) -> list[str]:
    patch, finding = result.patch, result.finding
    assert patch is not None
    where = code(location(patch.path, patch.start_line, patch.end_line))
    if committable:
        moved = (patch.path, patch.start_line, patch.end_line) != (
            finding.path,
            finding.start_line,
            finding.end_line,
        )
        raised = code(location(finding.path, finding.start_line, finding.end_line))
        note = [f"Raised on {raised}; the suggestion replaces {where}."] if moved else []
        return [*note, suggestion(patch.replacement)]
    lines = replacement_lines(patch.replacement)
    if not lines:
        return [f"The fix deletes {where}."]
    return [f"The fix replaces {where} with:", code_block(lines)]


def _tester(rejection: Message | None, *, overruled: bool) -> list[str]:
    label = "Overruled: the tester's position" if overruled else "The tester's position"
    if rejection is None or not rejection.text.strip():
        return [f"**{label}**\nThe claim above."]
    return _labelled(label, rejection.text)


def _coder(answer: Message | None) -> list[str]:
    if answer is None:
        return ["**The coder's position**\nThe coder did not answer."]
    blocks = _labelled("The coder's position", answer.text or "(no argument given)")
    if answer.patch is not None:
        patch = answer.patch
        lines = replacement_lines(clip(patch.replacement, PROSE_LIMIT))
        where = code(location(patch.path, patch.start_line, patch.end_line))
        blocks += [f"Its last patch for {where}, not agreed:", code_block(lines)]
    return blocks


def _labelled(label: str, text: str) -> list[str]:
    return [f"**{label}**\n{prose(text)}"] if text.strip() else []


def _footer(entry: Entry) -> str:
    result = entry.result
    return (
        f"<sub>Tiebreak · {entry.label} · {_rounds(result)} · {result.tokens:,} billed tokens</sub>"
    )


def _rounds(result: FindingOutcome) -> str:
    verb = "left open" if result.resolution is Resolution.OPEN else "closed"
    return f"{verb} in round {result.closed_in_round}"


def _last(thread: Sequence[Message], kinds: tuple[MessageKind, ...]) -> Message | None:
    return next((m for m in reversed(thread) if m.kind in kinds), None)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
