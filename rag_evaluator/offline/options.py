"""The offline families' options and their defaults (``--k``, ``--match``, the thresholds,
``--fallback-phrases``, ``--min-retrieval-score``, ``--require-citations``), apart from the
metrics themselves so that the command line declares them without loading the metrics."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rag_evaluator.text.non_answers import SEED_FALLBACK_PHRASES

DEFAULT_K = 5
DEFAULT_SIMILARITY_THRESHOLD = 0.8
DEFAULT_OVERLAP_THRESHOLD = 0.7
DEFAULT_FALLBACK_PHRASES = SEED_FALLBACK_PHRASES
DEFAULT_MIN_RETRIEVAL_SCORE = 0.5


class MatchMode(StrEnum):
    """How a retrieved chunk is found to match a golden chunk (``--match``)."""

    EXACT = "exact"
    SIMILARITY = "similarity"
    OVERLAP = "overlap"


@dataclass(frozen=True)
class MetricOptions:
    """Options of the offline families (``--k``, ``--match``, ``--similarity-threshold``,
    ``--overlap-threshold``, ``--embedding-model``, ``--bertscore-model``,
    ``--fallback-phrases``, ``--min-retrieval-score``, ``--require-citations``)."""

    k: int = DEFAULT_K
    match: str = MatchMode.EXACT.value
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD
    overlap_threshold: float = DEFAULT_OVERLAP_THRESHOLD
    embedding_model: str | None = None
    bertscore_model: str | None = None
    fallback_phrases: tuple[str, ...] = DEFAULT_FALLBACK_PHRASES
    min_retrieval_score: float = DEFAULT_MIN_RETRIEVAL_SCORE
    require_citations: bool = True
    # False for a run without reference answers: only the metrics that read none
    # (inputs/references.py) are computed, the others are not columns of the run.
    references: bool = True
