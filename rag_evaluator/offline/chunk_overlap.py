"""How much of a golden chunk a retrieved chunk covers: ROUGE-L recall on Unicode words.

ROUGE-L recall of golden chunk g against retrieved chunk r is LCS(g, r) / |g|, the longest
common token subsequence over the golden chunk's token count: 1 when r holds all of g's
words in order, whatever r adds around them (another chunking of the same document). It is
rouge-score's ``RougeScorer(["rougeL"]).score(g, r)["rougeL"].recall``, its default
settings (no stemming), and 0 when either text has no token.

Why not call ``RougeScorer.score`` for each pair: it tokenizes both texts on every call and
computes the LCS with a pure-Python table, O(|g|·|r|) interpreted steps. A run of 10,000
questions with 10 retrieved and 3 golden chunks of ~200 words is 300,000 pairs: hours.
Here each distinct chunk is tokenized once, with the tokenizer the overlap family's ROUGE
uses without its stemmer (``text/unicode_tokens.word_tokens``: rouge-score's own on ASCII
text, and the words of every other script, one token per character where words are not
spaced), its tokens are coded as one character each, and the LCS length comes from
rapidfuzz's bit-parallel ``LCSseq`` (C++), so a pair costs microseconds. Tests check the
result against ``RougeScorer`` (with that tokenizer) on hand-worked cases and random texts.

No stemming: chunks of the same documents share their words as written, and rouge-score's
stemmer (nltk's Porter) would add seconds of ``import nltk`` to every retrieval run.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_evaluator.text.unicode_tokens import word_tokens

# Token codes skip the surrogate range, which is not text.
_SURROGATES_START = 0xD800
_SURROGATES_SIZE = 0x800


class _TokenCodes(dict[str, str]):
    """Token -> its one-character code, a new code for a token never seen."""

    def __missing__(self, token: str) -> str:
        number = len(self) + 1
        if number >= _SURROGATES_START:
            number += _SURROGATES_SIZE
        code = self[token] = chr(number)
        return code


class ChunkTokens:
    """Tokenizes chunks once and codes each distinct token as one character, so that a
    chunk's token sequence is a string rapidfuzz compares natively. One per run."""

    def __init__(self) -> None:
        self._codes = _TokenCodes()
        self._chunks: dict[str, str] = {}

    def encode(self, text: str) -> str:
        """The chunk's tokens, one character per token."""
        encoded = self._chunks.get(text)
        if encoded is None:
            encoded = "".join(map(self._codes.__getitem__, word_tokens(text)))
            self._chunks[text] = encoded
        return encoded


def rouge_l_recall(golden: str, retrieved: str) -> float:
    """LCS length over the golden chunk's length, on encoded token sequences; 0 when either
    is empty (as rouge-score)."""
    # Imported here, not at the top: the results and families modules import this one
    # through the metric registry, and the command line should start without rapidfuzz.
    from rapidfuzz.distance import LCSseq

    if not golden or not retrieved:
        return 0.0
    return LCSseq.similarity(golden, retrieved) / len(golden)


def recall_matrix(retrieved: Sequence[str], golden: Sequence[str]) -> list[list[float]]:
    """``matrix[i][j]``: ROUGE-L recall of encoded golden chunk j against retrieved chunk i."""
    return [[rouge_l_recall(chunk, candidate) for chunk in golden] for candidate in retrieved]
