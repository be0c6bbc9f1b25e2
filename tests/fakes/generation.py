"""The generator's side of the fakes (rag-eval generate)."""

from __future__ import annotations

import html
import re
from typing import Any

# A generator request is recognised by its <chunk> tags; its replies are scripted per chunk
# (script_generation) or made up from the chunk: a question about one of its sentences, that
# sentence as the answer and as the supporting quote, so the grounding filter passes.
_CHUNK_PATTERN = re.compile(r'<chunk source="([^"]*)">\n?(.*?)\n?</chunk>', re.DOTALL)
_QUESTION_TYPE_PATTERN = re.compile(r"<question_type>(.*?)</question_type>")
_VARIANT_PATTERN = re.compile(r"this is variant (\d+)")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
NO_INFORMATION_ANSWER = "No information is available in the documents to answer this question."
_QUESTION_OPENINGS = {
    "factual": "What do the documents say about",
    "comparison": "How do the options differ regarding",
    "multi_hop": "How does this connect with the related rule:",
    "unanswerable": "Is there a rule for public holidays in 2091 about",
}


def generated(
    question: str,
    answer: str,
    required_facts: list[str] | None = None,
    supporting_sentences: list[str] | None = None,
) -> dict[str, Any]:
    """A generator reply for a fake's ``script_generation``."""
    return {
        "question": question,
        "answer": answer,
        "required_facts": list(required_facts or []),
        "supporting_sentences": list(supporting_sentences or []),
    }


def generation_chunks(user_message: str) -> list[tuple[str, str]]:
    """The ``(source, text)`` of each chunk of a generator request, unescaped."""
    return [
        (html.unescape(source), html.unescape(text))
        for source, text in _CHUNK_PATTERN.findall(user_message)
    ]


def _sentences_of(text: str) -> list[str]:
    parts = [part.strip() for part in _SENTENCE_SPLIT.split(text)]
    return [part for part in parts if len(part.split()) >= 4 and not part.startswith("#")]


def default_generation(user_message: str) -> dict[str, Any]:
    """The reply a generator request gets when nothing is scripted for its chunks."""
    chunks = generation_chunks(user_message)
    found = _QUESTION_TYPE_PATTERN.search(user_message)
    question_type = found.group(1) if found else "factual"
    variant_found = _VARIANT_PATTERN.search(user_message)
    variant = int(variant_found.group(1)) - 1 if variant_found else 0
    picked = []
    for _, text in chunks:
        sentences = _sentences_of(text) or [text.strip()]
        picked.append(sentences[variant % len(sentences)])
    words = " ".join(picked[0].split()[:6]).rstrip(".,;:!?")
    opening = _QUESTION_OPENINGS.get(question_type, _QUESTION_OPENINGS["factual"])
    question = f"{opening} '{words}'?"
    if question_type == "unanswerable":
        return generated(question, NO_INFORMATION_ANSWER)
    return generated(question, " ".join(picked), [" ".join(picked[0].split()[:3])], picked)
