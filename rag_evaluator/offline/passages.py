"""Long texts cut into passages that an embedding model reads whole.

An embedding model reads a fixed number of word pieces (all-MiniLM-L6-v2: 256, two of them
its own markers) and ignores the rest, so a long retrieved context would be judged on its
beginning only. Such a text is cut into passages on sentence boundaries, each within the
model's budget, and each passage after the first repeats the end of the one before it (up to
a quarter of the budget) so that a statement spanning the cut is still read whole somewhere.
A sentence longer than the budget is cut between words; a word longer than the budget (no
spaces, such as a long URL) between characters.

Pure: lengths are measured by a ``WordPieceCounter`` the caller supplies (the model's own
tokenizer in the run, any function in tests).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# Maps texts to their length in word pieces, without the model's own markers.
WordPieceCounter = Callable[[Sequence[str]], Sequence[int]]

# A passage repeats at most this share of the budget from the end of the one before it.
OVERLAP_DIVISOR = 4
# Re-packing rounds when a packed passage counts more than the sum of its pieces (tokenizers
# that are not WordPiece can merge pieces across the cut).
_REPACK_ROUNDS = 4

# Sentence ends: ., ! or ? followed by whitespace; a line break; CJK full stops, which are not
# followed by a space.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+|(?<=[。！？])")
_WORD = re.compile(r"\S+")

Span = tuple[int, int]


def _stripped_spans(text: str, start: int, end: int) -> list[Span]:
    piece = text[start:end]
    if not piece.strip():
        return []
    left = start + len(piece) - len(piece.lstrip())
    right = end - (len(piece) - len(piece.rstrip()))
    return [(left, right)]


def sentence_spans(text: str) -> list[Span]:
    """The (start, end) offsets of the sentences of ``text``, without surrounding space."""
    spans: list[Span] = []
    position = 0
    for match in _SENTENCE_BREAK.finditer(text):
        spans.extend(_stripped_spans(text, position, match.start()))
        position = match.end()
    spans.extend(_stripped_spans(text, position, len(text)))
    return spans


def _word_spans(text: str, span: Span) -> list[Span]:
    start, end = span
    return [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]


def _character_spans(text: str, span: Span, length: int, budget: int) -> list[Span]:
    """Cut one over-long word into pieces of about ``budget`` word pieces each."""
    start, end = span
    width = max(1, (end - start) * budget // max(length, 1))
    return [(position, min(position + width, end)) for position in range(start, end, width)]


def _units(text: str, spans: list[Span], budget: int, count: WordPieceCounter) -> list[Span]:
    """Spans of at most ``budget`` word pieces each (as far as cutting can get them)."""
    lengths = list(count([text[start:end] for start, end in spans]))
    units: list[Span] = []
    for span, length in zip(spans, lengths, strict=True):
        if length <= budget:
            units.append(span)
            continue
        words = _word_spans(text, span)
        if len(words) > 1:
            units.extend(_units(text, words, budget, count))
        else:
            pieces = _character_spans(text, span, length, budget)
            units.extend(pieces if len(pieces) > 1 else [span])
    return units


def pack(lengths: Sequence[int], budget: int, overlap: int) -> list[tuple[int, int]]:
    """Group consecutive units into passages of at most ``budget`` word pieces.

    Returns (first, end) unit index ranges. Each passage after the first starts with the
    trailing units of the one before it that fit in ``overlap`` word pieces (and leave room
    for the next unit). A unit longer than ``budget`` is a passage on its own.
    """
    ranges: list[tuple[int, int]] = []
    first = 0
    total = len(lengths)
    while first < total:
        end = first + 1
        used = lengths[first]
        while end < total and used + lengths[end] <= budget:
            used += lengths[end]
            end += 1
        ranges.append((first, end))
        if end >= total:
            break
        next_first = end
        carried = 0
        while (
            next_first - 1 > first
            and carried + lengths[next_first - 1] <= overlap
            and carried + lengths[next_first - 1] + lengths[end] <= budget
        ):
            next_first -= 1
            carried += lengths[next_first]
        first = next_first
    return ranges


def split_passages(text: str, budget: int, count: WordPieceCounter) -> list[str]:
    """``text`` as passages of at most ``budget`` word pieces (``[text]`` when it fits).

    Cuts fall between sentences where possible; consecutive passages overlap by up to a
    quarter of the budget.
    """
    if budget < 1:
        raise ValueError(f"the passage budget must be at least 1 word piece (got {budget})")
    if not text.strip() or count([text])[0] <= budget:
        return [text]
    units = _units(text, sentence_spans(text), budget, count)
    lengths = list(count([text[start:end] for start, end in units]))
    limit = budget
    passages: list[str] = []
    for _ in range(_REPACK_ROUNDS):
        ranges = pack(lengths, limit, limit // OVERLAP_DIVISOR)
        passages = [text[units[first][0] : units[end - 1][1]] for first, end in ranges]
        excess = max(count(passages)) - budget
        if excess <= 0 or limit - excess < 1:
            break
        limit -= excess
    return passages
