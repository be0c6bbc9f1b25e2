"""The sentences of an answer, for metrics that judge it sentence by sentence.

Boundaries come from pysbd (rule-based sentence boundary disambiguation, its English rules):
a full stop after an abbreviation ("Dr.", "Jan. 5", "e.g.", "U.S."), an initial or inside a
number ("2.5", "$2.061") ends no sentence, while ". ", "! ", "? " and the CJK marks "。！？"
do. A line break always ends a sentence (list items, headings). Markdown list markers are
removed, and pieces with no letter or digit are dropped.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pysbd

_HAS_WORD = re.compile(r"[^\W_]")
_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d+[.)])\s+")


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    # clean=False: the sentences are the text's own characters, not a rewritten copy.
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, in order (see the module's rules)."""
    sentences: list[str] = []
    for line in text.splitlines():
        if not _HAS_WORD.search(line):
            continue
        for piece in _segmenter().segment(line.strip()):
            sentence = _LIST_MARKER.sub("", piece.strip()).strip()
            if _HAS_WORD.search(sentence):
                sentences.append(sentence)
    return sentences
