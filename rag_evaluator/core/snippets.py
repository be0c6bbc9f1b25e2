"""Showing untrusted text (questions, keys, headers) safely inside one-line messages."""

from __future__ import annotations

_ELLIPSIS = "…"


def quote_snippet(text: str, limit: int = 60) -> str:
    """Quote ``text`` for a message: whitespace collapsed, cut to ``limit`` characters.

    ``repr`` escapes control characters (a terminal escape sequence in an input file
    must not reach the terminal) and makes leading or trailing spaces visible.
    """
    collapsed = " ".join(text.split())
    if len(collapsed) > limit:
        collapsed = collapsed[: max(1, limit - 1)].rstrip() + _ELLIPSIS
    return repr(collapsed)
