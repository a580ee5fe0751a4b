"""How Tiebreak words a count in what it writes: `1 finding`, `3 findings`."""


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, made plural by an `s` unless `n` is one."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
