"""The checks a generated question must pass to enter the golden set.

Applied to every reply in question order; the first check a reply fails is the reason it is
dropped, and each reason is counted in the run's summary:

1. ``failed``: the call gave no usable reply (after its retries).
2. ``empty``: the question or the answer is blank.
3. ``too_long``: the question is over ``MAX_QUESTION_CHARACTERS`` or the answer over
   ``MAX_ANSWER_CHARACTERS`` characters.
4. ``answerable``: an unanswerable question whose reply cites supporting sentences anyway.
5. ``not_grounded``: an answer without supporting sentences, or with one that is not found
   verbatim in the chunks (after whitespace normalisation) or is under ``MIN_SUPPORT_WORDS``
   words; a multi-hop answer not supported by every one of its chunks.
6. ``quotes_chunk``: the question repeats ``QUOTE_WORDS`` or more consecutive words of a chunk.
7. ``near_duplicate``: the question is a near-duplicate of a question kept before it
   (rapidfuzz ``token_sort_ratio`` at least ``DUPLICATE_THRESHOLD`` after rapidfuzz's default
   processing: case, punctuation and surrounding whitespace ignored).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils

from rag_evaluator.generate.prompts import GeneratedPair
from rag_evaluator.generate.sampling import MULTI_HOP, UNANSWERABLE

FAILED = "failed"
EMPTY = "empty"
TOO_LONG = "too_long"
ANSWERABLE = "answerable"
NOT_GROUNDED = "not_grounded"
QUOTES_CHUNK = "quotes_chunk"
NEAR_DUPLICATE = "near_duplicate"
FILTERS = (FAILED, EMPTY, TOO_LONG, ANSWERABLE, NOT_GROUNDED, QUOTES_CHUNK, NEAR_DUPLICATE)
FILTER_LABELS = {
    FAILED: "Failed calls (no usable reply)",
    EMPTY: "Empty question or answer",
    TOO_LONG: "Over-long question or answer",
    ANSWERABLE: "Unanswerable question citing the chunk",
    NOT_GROUNDED: "Not grounded (support not found in the chunk)",
    QUOTES_CHUNK: "Question quoting the chunk",
    NEAR_DUPLICATE: "Near-duplicate question",
}

MAX_QUESTION_CHARACTERS = 300
MAX_ANSWER_CHARACTERS = 1000
MIN_SUPPORT_WORDS = 2
QUOTE_WORDS = 10
DUPLICATE_THRESHOLD = 85.0

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Rejection:
    """Why a reply was dropped: the filter and a short explanation for the log."""

    reason: str
    detail: str


def _normalised_with_positions(text: str) -> tuple[str, list[int]]:
    """``text`` with every whitespace run as one space and no surrounding whitespace, and for
    each character of the result its position in ``text``."""
    characters: list[str] = []
    positions: list[int] = []
    pending_space = -1
    for position, character in enumerate(text):
        if character.isspace():
            if characters and pending_space < 0:
                pending_space = position
            continue
        if pending_space >= 0:
            characters.append(" ")
            positions.append(pending_space)
            pending_space = -1
        characters.append(character)
        positions.append(position)
    return "".join(characters), positions


def normalise(text: str) -> str:
    """Whitespace runs as one space, no surrounding whitespace."""
    return " ".join(text.split())


def locate(sentence: str, text: str) -> tuple[int, int] | None:
    """Where ``sentence`` occurs in ``text`` after whitespace normalisation, as ``(start,
    end)`` offsets into ``text`` itself; ``None`` when it does not occur (or is blank)."""
    wanted = normalise(sentence)
    if not wanted:
        return None
    flat, positions = _normalised_with_positions(text)
    found = flat.find(wanted)
    if found < 0:
        return None
    return positions[found], positions[found + len(wanted) - 1] + 1


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _quoted_run(question: str, chunk_texts: Sequence[str]) -> bool:
    words = _words(question)
    if len(words) < QUOTE_WORDS:
        return False
    runs = {
        tuple(words[index : index + QUOTE_WORDS]) for index in range(len(words) - QUOTE_WORDS + 1)
    }
    for text in chunk_texts:
        chunk_words = _words(text)
        for index in range(len(chunk_words) - QUOTE_WORDS + 1):
            if tuple(chunk_words[index : index + QUOTE_WORDS]) in runs:
                return True
    return False


def check_reply(
    pair: GeneratedPair, question_type: str, chunk_texts: Sequence[str]
) -> Rejection | list[tuple[int, int, int]]:
    """Checks 2 to 6 for one reply: a ``Rejection``, or where each supporting sentence is, as
    ``(chunk index, start, end)`` offsets into that chunk's text."""
    question, answer = pair.question.strip(), pair.answer.strip()
    if not question or not answer:
        return Rejection(EMPTY, "the question is blank" if not question else "the answer is blank")
    if len(question) > MAX_QUESTION_CHARACTERS:
        return Rejection(
            TOO_LONG,
            f"the question has {len(question)} characters (at most {MAX_QUESTION_CHARACTERS})",
        )
    if len(answer) > MAX_ANSWER_CHARACTERS:
        return Rejection(
            TOO_LONG, f"the answer has {len(answer)} characters (at most {MAX_ANSWER_CHARACTERS})"
        )
    sentences = [sentence for sentence in pair.supporting_sentences if sentence.strip()]
    if question_type == UNANSWERABLE:
        if sentences:
            return Rejection(ANSWERABLE, "the reply cites the chunk as answering the question")
        located: list[tuple[int, int, int]] = []
    else:
        grounded = _grounding(sentences, question_type, chunk_texts)
        if isinstance(grounded, Rejection):
            return grounded
        located = grounded
    if _quoted_run(question, chunk_texts):
        return Rejection(QUOTES_CHUNK, f"the question repeats {QUOTE_WORDS}+ words of the chunk")
    return located


def _grounding(
    sentences: Sequence[str], question_type: str, chunk_texts: Sequence[str]
) -> Rejection | list[tuple[int, int, int]]:
    if not sentences:
        return Rejection(NOT_GROUNDED, "no supporting sentence was given")
    located: list[tuple[int, int, int]] = []
    for sentence in sentences:
        if len(_words(sentence)) < MIN_SUPPORT_WORDS:
            return Rejection(
                NOT_GROUNDED, f"the supporting sentence {sentence.strip()!r} is too short"
            )
        where = next(
            (
                (index, *span)
                for index, text in enumerate(chunk_texts)
                if (span := locate(sentence, text)) is not None
            ),
            None,
        )
        if where is None:
            shown = normalise(sentence)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            return Rejection(NOT_GROUNDED, f"{shown!r} is not in the chunk")
        located.append(where)
    if question_type == MULTI_HOP and len(chunk_texts) > 1:
        supported = {index for index, _, _ in located}
        missing = [index + 1 for index in range(len(chunk_texts)) if index not in supported]
        if missing:
            return Rejection(
                NOT_GROUNDED,
                f"no supporting sentence comes from chunk {', '.join(map(str, missing))} of "
                f"{len(chunk_texts)}",
            )
    return located


def is_near_duplicate(question: str, kept: Sequence[str]) -> bool:
    """Whether ``question`` is a near-duplicate of one of the ``kept`` questions."""
    if not kept:
        return False
    found = process.extractOne(
        question,
        kept,
        scorer=fuzz.token_sort_ratio,
        processor=utils.default_process,
        score_cutoff=DUPLICATE_THRESHOLD,
    )
    return found is not None
