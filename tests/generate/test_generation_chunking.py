"""Chunking documents by paragraphs: offsets that slice back exactly, limits, headings."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.generate.documents import (
    DocumentText,
    chunk_document,
    chunk_documents,
    paragraphs,
    question_chunks,
)


def _chunks(text: str, limit: int = 1500):
    return chunk_document(DocumentText("doc.md", text), limit)


def test_short_paragraphs_are_joined_into_one_chunk_with_the_text_between_them() -> None:
    text = "First paragraph here.\n\nSecond paragraph here.\n"
    (chunk,) = _chunks(text)
    assert chunk.text == "First paragraph here.\n\nSecond paragraph here."
    assert (chunk.start, chunk.end) == (0, len(text) - 1)


def test_paragraphs_are_split_at_blank_lines_with_spaces_or_carriage_returns() -> None:
    text = "  One.\r\n \r\nTwo.\n\t\nThree.  "
    spans = list(paragraphs(text))
    assert [text[start:end] for start, end in spans] == ["One.", "Two.", "Three."]


def test_a_new_chunk_starts_where_the_next_paragraph_would_pass_the_limit() -> None:
    first = "A" * 50 + "."
    second = "B" * 50 + "."
    third = "C" * 50 + "."
    text = f"{first}\n\n{second}\n\n{third}"
    chunks = _chunks(text, limit=110)
    assert [chunk.text for chunk in chunks] == [f"{first}\n\n{second}", third]


def test_a_long_paragraph_is_cut_at_sentence_ends() -> None:
    sentences = [f"Sentence number {index} is here." for index in range(10)]
    text = " ".join(sentences)
    chunks = _chunks(text, limit=100)
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk.text) <= 100
        assert chunk.text.endswith(".")
        assert chunk.text.startswith("Sentence")


def test_a_sentence_longer_than_the_limit_is_cut_at_whitespace_and_a_word_run_hard() -> None:
    words = " ".join(["word"] * 60)
    run = "x" * 250
    chunks = _chunks(f"{words}\n\n{run}", limit=100)
    assert all(len(chunk.text) <= 100 for chunk in chunks)
    assert all(not chunk.text.startswith(" ") and not chunk.text.endswith(" ") for chunk in chunks)
    assert "".join(chunk.text for chunk in chunks if "x" in chunk.text) == run


def test_a_heading_goes_with_the_section_it_heads() -> None:
    intro = "Intro text that fills the first chunk. " * 2
    section = "The section body goes here and is long enough."
    text = f"{intro.strip()}\n\n## Section\n\n{section}"
    chunks = _chunks(text, limit=len(intro) + 12)
    assert chunks[0].text == intro.strip()
    assert chunks[1].text.startswith("## Section")


def test_chunks_are_numbered_across_documents_in_order() -> None:
    documents = [DocumentText("a.md", "One.\n\nTwo."), DocumentText("b.md", "Three.")]
    chunks = chunk_documents(documents, 6)
    assert [(chunk.chunk_id, chunk.document) for chunk in chunks] == [
        (0, "a.md"),
        (1, "a.md"),
        (2, "b.md"),
    ]


def test_chunks_too_short_to_ask_about_are_left_out() -> None:
    text = "# Title\n\n" + "This paragraph has well over eight words in it, so it counts."
    chunks = _chunks(text, limit=20)
    kept = question_chunks(chunks)
    assert chunks[0].text == "# Title"
    assert all(chunk.word_count() >= 8 for chunk in kept)
    assert "# Title" not in [chunk.text for chunk in kept]


_TEXT = st.lists(
    st.sampled_from([*"abc ,.!?\n\r\t#é€", "\n\n", "  ", ". ", "word ", "\n \n"]), max_size=300
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, limit=st.integers(min_value=1, max_value=200))
def test_every_chunk_slices_back_and_no_text_is_lost(text: str, limit: int) -> None:
    chunks = _chunks(text, limit)
    previous_end = 0
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        assert len(chunk.text) <= limit
        assert chunk.text == chunk.text.strip()
        assert chunk.start >= previous_end
        # Only whitespace lies between two chunks.
        assert not text[previous_end : chunk.start].strip()
        previous_end = chunk.end
    assert not text[previous_end:].strip()


@settings(max_examples=100, deadline=None)
@given(text=_TEXT)
def test_chunking_never_cuts_inside_a_word_when_words_are_short(text: str) -> None:
    words = set(re.findall(r"\S+", text))
    chunks = _chunks(text, limit=1500)
    joined = " ".join(chunk.text for chunk in chunks)
    assert words <= set(re.findall(r"\S+", joined))
