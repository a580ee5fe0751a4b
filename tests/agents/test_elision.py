"""A scope larger than the context's budget reaches the agents shown in part — its signature,
the lines around each change, numbered markers for the rest — and is never left out; what the
budget does leave out is listed once."""

import re
from collections import Counter

import pytest

from agents.context.reading import Reading, unit_context
from agents.diff import Diff
from agents.models.llm import LLMRequest, Role
from agents.models.scripted import ScriptedLLM, by_role
from agents.review import review_diff
from tests.scenarios.debates import git_diff, report

READER = "aiohttp/reader.py"
SIGNATURE = "    def feed_data(self, data: bytes, size: int = 0) -> tuple[bool, bytes]:"
MARKER = re.compile(r"^ +… lines (\d+)–(\d+) not shown …$")
NUMBERED = re.compile(r"^ *(\d+) (.*)$")


def frames(name: str, branches: int, opcode: int = 0) -> list[str]:
    """A method of 5 lines a branch, each branch handling one opcode from `opcode` on."""
    out = [
        f"    def {name}(self, data: bytes, size: int = 0) -> tuple[bool, bytes]:",
        '        """Feed `data` to the frame parser; the frames it completes go to the queue."""',
        "        start = 0",
    ]
    for n in range(opcode, opcode + branches):
        out += [
            f"        if self._opcode == {n}:",
            f"            payload = data[start : start + {n + 8}]",
            f"            self._queue.feed_data(Frame({n}, payload), len(payload))",
            f"            start += {n + 8}",
            "",
        ]
    return [*out, "        return False, data[start:]"]


def reader(branches: int = 60, methods: tuple[str, ...] = ("feed_data",)) -> str:
    """A websocket reader whose methods are each about 5 * `branches` lines long, the i-th
    handling opcodes from 100 * i on."""
    out = ['"""Websocket frames, parsed as the bytes arrive."""', "", "", "class WebSocketReader:"]
    for i, name in enumerate(methods):
        out += [*frames(name, branches, 100 * i), ""]
    return "\n".join(out) + "\n"


def changed(text: str, *opcodes: int, call: str = "") -> str:
    """`text` with the frames of `opcodes` fed twice as long (plus `call`)."""
    for n in opcodes:
        old = f"            start += {n + 8}\n"
        assert text.count(old) == 1
        text = text.replace(old, f"            start += 2 * {n + 8}{call}\n")
    return text


def numbered(context: str) -> list[tuple[int, str]]:
    """The context's code lines, each with the number it is shown with."""
    return [(int(m[1]), m[2]) for line in context.splitlines() if (m := NUMBERED.match(line))]


def fenced(request: LLMRequest) -> str:
    stable = "".join(b.text for b in request.blocks if b.stable)
    (found,) = re.findall(r"<(untrusted-context-[0-9a-f]{16})>\n(.*?)\n</\1>", stable, re.DOTALL)
    return str(found[1])


async def test_a_300_line_function_reaches_the_tester_elided_around_its_change() -> None:
    before = reader()
    after = changed(before, 29)
    lines = after.splitlines()
    change = lines.index("            start += 2 * 37") + 1
    first = lines.index(SIGNATURE) + 1
    last = lines.index("        return False, data[start:]") + 1
    assert last - first + 1 >= 300
    llm = ScriptedLLM(by_role(tester=[report()]))

    await review_diff(
        Diff.parse(git_diff({READER: (before, after)})), llm, reading=Reading({READER: after})
    )

    (seed,) = llm.calls(Role.TESTER)
    context = fenced(seed)
    assert f"{READER} lines {first}-{last} (shown in part): function feed_data" in context
    shown = dict(numbered(context))
    # The signature and the change, at their numbers; the far ends of the body are not shown.
    assert shown[first] == SIGNATURE
    assert shown[change] == "            start += 2 * 37"
    assert first + 20 not in shown
    assert last - 5 not in shown
    assert "Left out" not in context
    # Every line shown is the file's line of that number...
    assert all(lines[n - 1] == text for n, text in shown.items())
    # ...and each marker names exactly the lines between those shown on either side of it.
    body = context.splitlines()[1:]
    markers = [(i, MARKER.match(line)) for i, line in enumerate(body)]
    gaps = [(i, int(m[1]), int(m[2])) for i, m in markers if m]
    assert len(gaps) == 2
    for i, start, end in gaps:
        assert NUMBERED.match(body[i - 1])
        assert int(NUMBERED.match(body[i - 1])[1]) == start - 1  # type: ignore[index]
        after_marker = NUMBERED.match(body[i + 1]) if i + 1 < len(body) else None
        assert end == (int(after_marker[1]) - 1 if after_marker else last)
    hidden = [n for _, a, b in gaps for n in range(a, b + 1)]
    assert sorted([*shown, *hidden]) == list(range(first, last + 1))


def test_every_change_of_a_multi_hunk_diff_keeps_its_enclosing_scope_under_a_small_budget() -> None:
    methods = ("feed_data", "feed_eof", "parse_frame", "parse_header")
    before = reader(branches=24, methods=methods)
    after = changed(before, 3, 112, 205, 220, 310)  # the third method changes twice
    lines = after.splitlines()
    diff = Diff.parse(git_diff({READER: (before, after)}))
    assert len(diff.files[0].hunks) == 5

    context = unit_context(diff, {READER: after}, max_tokens=500)

    shown = dict(numbered(context))
    for name in methods:
        signature = f"    def {name}(self, data: bytes, size: int = 0) -> tuple[bool, bytes]:"
        assert shown.get(lines.index(signature) + 1) == signature
    changes = [n for n, text in enumerate(lines, start=1) if "start += 2 *" in text]
    assert len(changes) == 5
    assert all(shown.get(n) == lines[n - 1] for n in changes)
    assert "Left out" not in context


def left_out_lines(context: str) -> list[str]:
    return [line for line in context.splitlines() if line.startswith("Left out")]


def left_out(context: str) -> list[str]:
    """The pieces the context lists as left out, by their lines."""
    lines = left_out_lines(context)
    pieces = [piece for line in lines for piece in line.split(": ", 1)[1].split("; ")]
    return [piece.split(" (", 1)[0] for piece in pieces]


def test_left_out_lists_each_piece_once() -> None:
    # Two hunks in one method too large for the budget, both calling a method that does not
    # fit beside it: the method around them is one piece, the method called another.
    before = reader(branches=32, methods=("feed_data", "decode"))
    after = changed(before, 5, 25, call=" + self.decode(data)[1]")
    diff = Diff.parse(git_diff({READER: (before, after)}))
    assert len(diff.files[0].hunks) == 2

    context = unit_context(diff, {READER: after}, max_tokens=600)

    listed = left_out(context)
    assert [piece for piece, times in Counter(listed).items() if times > 1] == []
    assert "function decode, called by a change" in context
    assert "function feed_data" not in "\n".join(left_out_lines(context))
    assert "(shown in part): function feed_data, around a change" in context


def test_a_changed_function_that_another_change_calls_is_one_piece() -> None:
    before = reader(branches=32, methods=("feed_data", "decode"))
    after = changed(changed(before, 5, call=" + self.decode(data)[1]"), 105)
    diff = Diff.parse(git_diff({READER: (before, after)}))

    context = unit_context(diff, {READER: after}, max_tokens=600)

    listed = left_out(context)
    assert [piece for piece, times in Counter(listed).items() if times > 1] == []
    assert "function decode, called by a change" not in context
    assert "Left out" not in context
    assert "(shown in part): function feed_data, around a change" in context
    assert "(shown in part): function decode, around a change" in context


PYTHON_HEAD = """\
@retry(times=3)
async def send_frames(
    self,
    frames: list[Frame],
) -> int:
"""
TYPESCRIPT_HEAD = """\
export function sendFrames(
  frames: Frame[],
  socket: Socket,
): number {
"""


@pytest.mark.parametrize(
    ("path", "head", "statement"),
    [
        ("ws/writer.py", PYTHON_HEAD, "    sent += {n}\n"),
        ("ws/writer.ts", TYPESCRIPT_HEAD, "  sent += {n};\n"),
    ],
)
def test_a_signature_of_several_lines_is_shown_whole(path: str, head: str, statement: str) -> None:
    body = "".join(statement.format(n=n) for n in range(200))
    end = "    return sent\n" if path.endswith(".py") else "  return sent;\n}\n"
    before = head + body + end
    after = before.replace(statement.format(n=100), statement.format(n=-100))

    context = unit_context(Diff.parse(git_diff({path: (before, after)})), {path: after}, 300)

    shown = dict(numbered(context))
    signature = head.splitlines()
    assert [shown.get(n) for n in range(1, len(signature) + 1)] == signature
    assert shown[len(signature) + 101] == statement.format(n=-100).rstrip("\n")
    assert len(signature) + 1 not in shown  # the body is not the signature


def test_functions_a_hunk_adds_whole_are_read_in_the_diff_not_again_in_the_context() -> None:
    # One hunk changes a line of `pay` and adds two whole functions after it, as a pull
    # request that adds helpers beside the code it fixes does.
    before = ["def pay(cart):", "    cart.paid = True", "    return cart", ""]
    added = [
        "",
        "",
        "def cart_to_dict(cart):",
        '    return {"id": cart.id, "paid": cart.paid}',
        "",
        "",
        "def total(carts):",
        "    return sum(c.amount for c in carts)",
    ]
    after = [
        "def pay(cart):",
        "    cart.paid = True",
        "    log(cart.id)",
        "    return cart",
        *added,
    ]
    later = [f"def helper_{n}(x):\n    return x + {n}\n\n" for n in range(40)]
    old, new = "\n".join(before) + "".join(later), "\n".join(after) + "\n\n" + "".join(later)
    diff = Diff.parse(git_diff({"shop/pay.py": (old, new)}))

    context = unit_context(diff, {"shop/pay.py": new}, max_tokens=100)

    headers = [line for line in context.splitlines() if line.startswith("shop/pay.py lines")]
    assert headers == ["shop/pay.py lines 1-4: function pay, around a change"]
    assert "def cart_to_dict" not in context
    assert "def total" not in context


def test_a_method_added_whole_brings_the_signature_of_its_class() -> None:
    methods = [f"    def get_{n}(self):\n        return self.values[{n}]\n\n" for n in range(60)]
    head = "class Store:\n    def __init__(self, values):\n        self.values = values\n\n"
    added = "    def clear(self):\n        self.values.clear()\n\n"
    old = head + "".join(methods)
    new = head + "".join(methods[:30]) + added + "".join(methods[30:])
    diff = Diff.parse(git_diff({"shop/store.py": (old, new)}))

    context = unit_context(diff, {"shop/store.py": new}, max_tokens=100)

    assert "shop/store.py lines 1-186 (shown in part): class Store, around a change" in context
    assert "    1 class Store:" in context
