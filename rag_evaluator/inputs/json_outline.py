"""What a JSON document read as a stream is made of, from its parser's events: the outline
``shapes.container_path`` needs to find its records, and whether its text holds an escape
the streaming parser reads otherwise than ``json`` does.

The streaming parser (yajl, through ijson) refuses what ``json`` accepts beyond the standard
(NaN, Infinity, numbers too large for a double or a 64-bit integer, raw control characters in
strings); such a document is read whole instead, as before. It reads a lone surrogate escape
(``\\ud800`` with no low half after it) as ``?`` where ``json`` keeps the surrogate: a
document holding one is read whole too, so both readings give the same records.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rag_evaluator.inputs.shapes import MAX_CONTAINER_DEPTH, container_path

LIST = "list"
OBJECT = "object"
OTHER = "other"


@dataclass
class DocumentOutline:
    """The top level's kind (``list``, ``object`` or ``other``) and, for an object, its
    outline: each value an object's outline (to ``MAX_CONTAINER_DEPTH`` levels; empty below),
    ``[]`` for a list, ``None`` for anything else. Duplicate keys as ``json`` reads them: the
    last value, in the first one's place."""

    top: str = OTHER
    fields: dict[str, Any] = field(default_factory=dict)


def outline(events: Iterable[tuple[str, Any]]) -> DocumentOutline:
    """The outline of the document whose ``ijson.basic_parse`` events are ``events``."""
    document = DocumentOutline()
    open_values: list[dict[str, Any] | None] = []  # each open object's outline, or None
    keys: list[str] = []  # the key being read in each open object ("" in a list)
    for event, value in events:
        if event == "map_key":
            keys[-1] = value
            continue
        if event in ("end_map", "end_array"):
            open_values.pop()
            keys.pop()
            continue
        node = _placed(document, open_values, keys, event)
        if event in ("start_map", "start_array"):
            open_values.append(node)
            keys.append("")
    return document


def _placed(
    document: DocumentOutline,
    open_values: list[dict[str, Any] | None],
    keys: list[str],
    event: str,
) -> dict[str, Any] | None:
    """Note a value starting with ``event`` in the object holding it (the top level when
    none is open); the outline its own keys go into, when they are followed."""
    if not open_values:
        document.top = {"start_map": OBJECT, "start_array": LIST}.get(event, OTHER)
        return document.fields if event == "start_map" else None
    holder = open_values[-1]
    if holder is None:
        return None  # inside a list, or deeper than records are looked for
    if event == "start_map":
        inner: dict[str, Any] = {}
        holder[keys[-1]] = inner
        return inner if len(open_values) < MAX_CONTAINER_DEPTH else None
    holder[keys[-1]] = [] if event == "start_array" else None
    return None


def records_path(document: DocumentOutline) -> tuple[str, ...] | None:
    """The keys leading to the document's list of records (``()``: the top level is the
    list); ``None`` when it has none to stream (a single record, another shape) or when a
    key holds a dot (the streaming parser's paths join keys with dots)."""
    if document.top == LIST:
        return ()
    if document.top != OBJECT:
        return None
    names = container_path(document.fields)
    if names is None or any("." in name for name in names):
        return None
    return names


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_ESCAPE_LENGTH = 6


class LoneSurrogates:
    """Watches a JSON text, a chunk at a time, for a surrogate escape that is not half of a
    pair (a high one followed at once by a low one). ``found`` may also be set by an escaped
    backslash before ``u``: a false alarm only costs reading the document whole."""

    def __init__(self) -> None:
        self.found = False
        self._carry = ""  # the last characters seen: an escape may be cut between chunks
        self._carry_at = 0  # where the carried text starts in the whole text
        self._seen_to = 0  # escapes starting before this were looked at
        self._low_due = -1  # where the low half of the last high escape must start

    def feed(self, text: str) -> None:
        if self.found:
            return
        joined = self._carry + text
        for match in _SURROGATE_ESCAPE.finditer(joined):
            start = self._carry_at + match.start()
            if start < self._seen_to:
                continue
            self._seen_to = start + 1
            if not self._pairs(start, high=match.group()[3] in "89abAB"):
                self.found = True
                return
        kept = joined[-(_ESCAPE_LENGTH - 1) :]
        self._carry_at += len(joined) - len(kept)
        self._carry = kept

    def _pairs(self, start: int, *, high: bool) -> bool:
        """Whether the escape at ``start`` keeps every surrogate so far paired."""
        if high:
            if self._low_due >= 0:
                return False  # the high escape before this one got no low half
            self._low_due = start + _ESCAPE_LENGTH
            return True
        if self._low_due != start:
            return False
        self._low_due = -1
        return True

    def finish(self) -> None:
        """The text has ended: a high escape still waiting for its low half is alone."""
        self.found = self.found or self._low_due >= 0
