"""Showing untrusted text (questions, keys, headers, file names) safely on a terminal."""

from __future__ import annotations

_ELLIPSIS = "…"
# What a terminal would act on rather than show: the C0 controls (ESC starts its escape
# sequences; line feed and tab are kept as layout), DEL, the C1 controls (0x9B is an 8-bit
# CSI) and the bidirectional overrides and isolates, which reorder the text a line shows.
_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_TERMINAL_ESCAPES = {
    code: repr(chr(code))[1:-1]
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0), *map(ord, _BIDI_CONTROLS))
    if chr(code) not in "\n\t"
}


def terminal_text(text: str) -> str:
    """``text`` with every character a terminal would act on written as its escape
    (``\\x1b``, ``\\u202e``): whatever a file holds, printing it cannot move the cursor,
    retitle the window, clear the screen or reorder the line."""
    return text.translate(_TERMINAL_ESCAPES)


# In JSON text those characters can only stand inside strings, where \uXXXX means the same.
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in _TERMINAL_ESCAPES if chr(code) not in "\r"}


def terminal_json(text: str) -> str:
    """JSON ``text`` with every character a terminal would act on written as its JSON escape:
    the same JSON for a script reading it, nothing active for a terminal showing it."""
    return text.translate(_JSON_ESCAPES)


def quote_snippet(text: str, limit: int = 60) -> str:
    """Quote ``text`` for a message: whitespace collapsed, cut to ``limit`` characters.

    ``repr`` escapes control characters (a terminal escape sequence in an input file
    must not reach the terminal) and makes leading or trailing spaces visible.
    """
    collapsed = " ".join(text.split())
    if len(collapsed) > limit:
        collapsed = collapsed[: max(1, limit - 1)].rstrip() + _ELLIPSIS
    return repr(collapsed)
