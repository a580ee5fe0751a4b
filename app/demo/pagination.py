"""Pages of a list, as the API's `?page=N&per_page=M` asks for them: counted from 1, a page
past the end showing the last one."""

from typing import TypeVar

T = TypeVar("T")


def page_count(total: int, per_page: int) -> int:
    """How many pages `total` items fill, `per_page` to a page (at least one, if empty)."""
    return max(1, total // per_page + 1)


def page(items: list[T], number: int, per_page: int) -> list[T]:
    """Page `number` of `items`, `per_page` to a page; past the last page, the last page."""
    if number < 1 or per_page < 1:
        raise ValueError("pages and their sizes are counted from 1")
    start = (min(number, page_count(len(items), per_page)) - 1) * per_page
    return items[start : start + per_page]
