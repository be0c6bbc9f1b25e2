"""Overlap metrics (seed 004): sentence BLEU from sacreBLEU and ROUGE-1/2/L from google's
rouge-score, both used as published rather than re-implemented.

Text in any language: rouge-score's own tokenizer keeps only ASCII letters and digits (a
Chinese answer had no token, a Russian one only its numbers), so ROUGE is given a Unicode
tokenizer (``text/unicode_tokens``: words of any script, one token per character in scripts
without spaces; Porter stemming for ASCII words only), identical to rouge-score's on ASCII
text. BLEU uses the sacreBLEU tokenizer that fits the texts (``bleu_tokenizer``): ``zh``
when Han characters are present, ``char`` for Japanese kana and Thai, Lao, Khmer or Myanmar,
``intl`` for other non-Latin letters (Cyrillic, Arabic, Greek...), its default ``13a``
otherwise (English and other Latin-script text, as before).

sacreBLEU belongs to the optional ``overlap`` extra and is imported on first use so that the
rest of the metrics work without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import regex

from rag_evaluator.errors import MissingExtraError
from rag_evaluator.text.unicode_tokens import has_non_latin_letter, is_ascii_word, word_tokens

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
_EXTRA = "overlap"
# rouge-score stems only words longer than this.
_SHORTEST_STEMMED = 4

BLEU_13A = "13a"
BLEU_ZH = "zh"
BLEU_CHAR = "char"
BLEU_INTL = "intl"
_HAN = regex.compile(r"\p{Han}")
_UNSEGMENTED = regex.compile(r"[\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")


def bleu_tokenizer(texts: Sequence[str]) -> str:
    """The sacreBLEU tokenizer for a hypothesis and its references (see the module)."""
    joined = "\n".join(texts)
    if _UNSEGMENTED.search(joined):
        return BLEU_CHAR
    if _HAN.search(joined):
        return BLEU_ZH
    if has_non_latin_letter(joined):
        return BLEU_INTL
    return BLEU_13A


@lru_cache(maxsize=4)
def _bleu_metric(tokenize: str = BLEU_13A) -> Any:
    try:
        from sacrebleu.metrics import BLEU
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "BLEU") from exc
    # sacreBLEU's sentence-level defaults (exp smoothing, effective order), the same as
    # sacrebleu.sentence_bleu; built once per tokenizer because construction is not free.
    return BLEU(effective_order=True, tokenize=tokenize)


class UnicodeRougeTokenizer:
    """rouge-score's tokenizer interface on Unicode words: identical to its default
    tokenizer on ASCII text (lowercase, runs of a-z0-9, Porter stemming of words longer than
    3 characters), and keeps the words of other scripts (unstemmed: the stemmer is
    English)."""

    def __init__(self, use_stemmer: bool) -> None:
        from nltk.stem import porter

        self._stemmer = porter.PorterStemmer() if use_stemmer else None

    def tokenize(self, text: str) -> list[str]:
        tokens = word_tokens(text)
        stemmer = self._stemmer
        if stemmer is None:
            return tokens
        return [
            stemmer.stem(token)
            if len(token) >= _SHORTEST_STEMMED and is_ascii_word(token)
            else token
            for token in tokens
        ]


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(list(ROUGE_TYPES), tokenizer=UnicodeRougeTokenizer(use_stemmer=True))


def require_overlap_extra() -> None:
    """Raise ``MissingExtraError`` now if sacreBLEU is not installed."""
    _bleu_metric()
    _rouge_scorer()


def bleu(answer: str, references: Sequence[str]) -> float | None:
    """sacreBLEU sentence BLEU of ``answer`` against ``references``, divided by 100.

    ``None`` when no reference has text; 0.0 for an empty answer.
    """
    usable = [reference for reference in references if reference.strip()]
    if not usable:
        return None
    if not answer.strip():
        return 0.0
    metric = _bleu_metric(bleu_tokenizer([answer, *usable]))
    return _unit(float(metric.sentence_score(answer, usable).score) / 100.0)


def rouge_f1(answer: str, reference: str) -> dict[str, float] | None:
    """ROUGE-1, ROUGE-2 and ROUGE-L F1 (Porter stemming) of ``answer`` against ``reference``.

    Keys are rouge-score's: ``rouge1``, ``rouge2``, ``rougeL``. ``None`` when the reference
    has no text. Words of every script count (``UnicodeRougeTokenizer``).
    """
    if not reference.strip():
        return None
    return dict(zip(ROUGE_TYPES, _rouge_fmeasures(answer, reference), strict=True))


# The three ROUGE columns of a row come from one scoring; the cache spares two re-runs.
@lru_cache(maxsize=256)
def _rouge_fmeasures(answer: str, reference: str) -> tuple[float, ...]:
    scores = _rouge_scorer().score(reference, answer)
    return tuple(_unit(float(scores[rouge_type].fmeasure)) for rouge_type in ROUGE_TYPES)


def _unit(value: float) -> float:
    # sacreBLEU's exp/log arithmetic can land a hair above 100 for identical texts.
    return min(1.0, max(0.0, value))
