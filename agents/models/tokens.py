"""Token estimates for text, before a model has counted it."""

import math

CHARS_PER_TOKEN = 4
"""Typical characters per token of source code and prose, for sizing review units."""

CHARS_PER_TOKEN_FLOOR = 3
"""Few texts tokenize denser than this; dividing by it over-estimates, as a reservation
against the token ceiling must."""


def typical_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def generous_tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN_FLOOR)
