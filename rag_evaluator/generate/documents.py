"""Documents cut into chunks by paragraphs, each chunk remembering where it came from.

A chunk's text is always ``document.text[start:end]``: offsets count characters (code points)
of the document's text as decoded (for a PDF: the extracted text, see ``generate/reading.py``),
so a Source Span slices back to its chunk exactly.

Paragraphs are separated by blank lines. Consecutive paragraphs of one document are packed into
a chunk while the chunk stays within ``max_characters`` (the text between them included); a
paragraph longer than that is cut at sentence ends, a sentence longer than that at whitespace,
and a run without whitespace at the limit. A Markdown heading is not left at the end of a chunk
when the section it heads starts the next one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

DEFAULT_CHUNK_CHARACTERS = 1500
MIN_CHUNK_CHARACTERS = 100
# Chunks with fewer words hold too little to ask about (a lone heading, a sign-off).
MIN_QUESTION_CHUNK_WORDS = 8

# A blank line: a line break, optional horizontal space (or "\r"), another line break.
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")
# Where a sentence may end inside a paragraph: after . ! ? … (and closing quotes or brackets),
# before whitespace; or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|\n")
_WORD = re.compile(r"\w+")
_MARKDOWN_HEADING = re.compile(r"#{1,6}\s")


@dataclass(frozen=True)
class DocumentText:
    """One document: its name (path relative to the documents folder, with ``/``) and text."""

    name: str
    text: str


@dataclass(frozen=True)
class Chunk:
    """A stretch of one document: ``text == document.text[start:end]``."""

    chunk_id: int
    document: str
    start: int
    end: int
    text: str

    def word_count(self) -> int:
        return len(_WORD.findall(self.text))


@dataclass(frozen=True)
class _Piece:
    start: int
    end: int
    heading: bool = False


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``start, end`` moved inwards past whitespace; ``None`` when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def paragraphs(text: str) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` of each paragraph, without its surrounding whitespace."""
    start = 0
    for found in _PARAGRAPH_BREAK.finditer(text):
        span = _trimmed(text, start, found.start())
        if span is not None:
            yield span
        start = found.end()
    span = _trimmed(text, start, len(text))
    if span is not None:
        yield span


def _cut_at_whitespace(text: str, start: int, end: int, limit: int) -> Iterator[tuple[int, int]]:
    """Cut ``text[start:end]`` into parts of at most ``limit`` characters, at whitespace when
    there is any in reach, else hard at the limit."""
    while end - start > limit:
        cut = start + limit
        space = max(text.rfind(" ", start + 1, cut + 1), text.rfind("\n", start + 1, cut + 1))
        if space > start:
            cut = space
        part = _trimmed(text, start, cut)
        if part is not None:
            yield part
        start = cut
        rest = _trimmed(text, start, end)
        if rest is None:
            return
        start = rest[0]
    part = _trimmed(text, start, end)
    if part is not None:
        yield part


def _sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    position = start
    for found in _SENTENCE_END.finditer(text, start, end):
        span = _trimmed(text, position, found.start())
        if span is not None:
            yield span
        position = found.end()
    span = _trimmed(text, position, end)
    if span is not None:
        yield span


def _paragraph_pieces(text: str, start: int, end: int, limit: int) -> Iterator[_Piece]:
    """A paragraph as one piece, or cut into pieces of at most ``limit`` characters."""
    if end - start <= limit:
        yield _Piece(start, end, heading=_MARKDOWN_HEADING.match(text, start) is not None)
        return
    pending: tuple[int, int] | None = None
    for sentence_start, sentence_end in _sentences(text, start, end):
        if sentence_end - sentence_start > limit:
            if pending is not None:
                yield _Piece(*pending)
                pending = None
            for part in _cut_at_whitespace(text, sentence_start, sentence_end, limit):
                yield _Piece(*part)
            continue
        if pending is not None and sentence_end - pending[0] <= limit:
            pending = (pending[0], sentence_end)
            continue
        if pending is not None:
            yield _Piece(*pending)
        pending = (sentence_start, sentence_end)
    if pending is not None:
        yield _Piece(*pending)


def _pack(pieces: Sequence[_Piece], limit: int) -> Iterator[tuple[int, int]]:
    """Consecutive pieces joined while the stretch from the first to the last fits."""
    group: list[_Piece] = []
    for piece in pieces:
        if group and piece.end - group[0].start > limit:
            carried: list[_Piece] = []
            # A heading belongs with the section after it, not at the end of this chunk.
            if len(group) > 1 and group[-1].heading and piece.end - group[-1].start <= limit:
                carried = [group.pop()]
            yield group[0].start, group[-1].end
            group = carried
        group.append(piece)
    if group:
        yield group[0].start, group[-1].end


def chunk_document(document: DocumentText, max_characters: int, first_id: int = 0) -> list[Chunk]:
    """The document's chunks in order, numbered from ``first_id``."""
    if max_characters < 1:
        raise ValueError("max_characters must be at least 1")
    text = document.text
    pieces = [
        piece
        for start, end in paragraphs(text)
        for piece in _paragraph_pieces(text, start, end, max_characters)
    ]
    return [
        Chunk(first_id + index, document.name, start, end, text[start:end])
        for index, (start, end) in enumerate(_pack(pieces, max_characters))
    ]


def chunk_documents(documents: Sequence[DocumentText], max_characters: int) -> list[Chunk]:
    """Every document's chunks, numbered in order across the documents."""
    chunks: list[Chunk] = []
    for document in documents:
        chunks.extend(chunk_document(document, max_characters, first_id=len(chunks)))
    return chunks


def question_chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    """The chunks long enough to ask a question about."""
    return [chunk for chunk in chunks if chunk.word_count() >= MIN_QUESTION_CHUNK_WORDS]
