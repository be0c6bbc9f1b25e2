"""Overlap metrics (seed 004): sentence BLEU from sacreBLEU and ROUGE-1/2/L from google's
rouge-score, both used as published rather than re-implemented.

Both libraries belong to the optional ``overlap`` extra; they are imported on first use so
that the rest of the metrics work without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from rag_evaluator.errors import MissingExtraError

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
_EXTRA = "overlap"


@lru_cache(maxsize=1)
def _bleu_metric() -> Any:
    try:
        from sacrebleu.metrics import BLEU
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "BLEU") from exc
    # sacreBLEU's sentence-level defaults (13a tokenizer, exp smoothing, effective order),
    # the same as sacrebleu.sentence_bleu; built once because construction is not free.
    return BLEU(effective_order=True)


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    try:
        from rouge_score.rouge_scorer import RougeScorer
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "ROUGE") from exc
    return RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def require_overlap_extra() -> None:
    """Raise ``MissingExtraError`` now if sacreBLEU or rouge-score is not installed."""
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
    return _unit(float(_bleu_metric().sentence_score(answer, usable).score) / 100.0)


def rouge_f1(answer: str, reference: str) -> dict[str, float] | None:
    """ROUGE-1, ROUGE-2 and ROUGE-L F1 (Porter stemming) of ``answer`` against ``reference``.

    Keys are rouge-score's: ``rouge1``, ``rouge2``, ``rougeL``. ``None`` when the reference
    has no text. rouge-score's tokenizer keeps only ASCII letters and digits, so text in
    other scripts scores 0.
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
