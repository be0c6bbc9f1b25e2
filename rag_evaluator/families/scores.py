"""The formulas of the LLM-judged families (seeds 001 and 004), on 0-1.

The model only judges (a claim is supported, a context is relevant, a criterion earns 4 of
5); every score is computed here from those judgements, so a weighted sum or a percentage is
never taken on the model's word.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

# Seed 001's RAGAS composite weights.
FAITHFULNESS = "faithfulness"
CONTEXT_PRECISION = "context_precision"
CONTEXT_RECALL = "context_recall"
ANSWER_RELEVANCE = "answer_relevance"
RAGAS_WEIGHTS: dict[str, float] = {
    FAITHFULNESS: 0.3,
    CONTEXT_PRECISION: 0.2,
    CONTEXT_RECALL: 0.2,
    ANSWER_RELEVANCE: 0.3,
}

# Seed 001's factual-accuracy criteria weights (scores 0-100 each).
FACTUAL_ACCURACY_WEIGHTS: dict[str, float] = {
    "correctness": 0.5,
    "completeness": 0.3,
    "consistency": 0.2,
}
# Seed 001's grade bands, on 0-1: the lowest accuracy that earns each grade, best first.
GRADE_BANDS: tuple[tuple[str, float], ...] = (("A", 0.8), ("B", 0.6), ("C", 0.4), ("D", 0.2))
LOWEST_GRADE = "E"
GRADES = (*(grade for grade, _ in GRADE_BANDS), LOWEST_GRADE)

# Weighted sums are rounded to this many decimals before banding, so 0.5*80 + 0.3*80 + 0.2*80
# is exactly 0.8 (an A), not 0.7999999999999999.
_DECIMALS = 9


def share_of(flags: Sequence[bool]) -> float:
    """The share of true flags (the caller decides what an empty list means)."""
    return sum(1 for flag in flags if flag) / len(flags)


def faithfulness(supported: Sequence[bool]) -> float:
    """Supported claims / claims; 1 when the answer makes no claim (nothing is unsupported)."""
    return share_of(supported) if supported else 1.0


def relevant_context_share(relevant: Sequence[bool]) -> float | None:
    """The share of retrieved contexts judged relevant, whatever their ranks; ``None`` with
    no context."""
    return share_of(relevant) if relevant else None


def ranked_context_precision(relevant: Sequence[bool]) -> float | None:
    """ragas's context precision: average precision over the ranking, the mean, over the
    relevant contexts, of the precision of the top k at each relevant rank k
    (``sum_k rel_k * P@k / relevant``).

    1 when every relevant context is ranked above every irrelevant one; 0 when none is
    relevant; ``None`` with no context.
    """
    if not relevant:
        return None
    hits = 0
    total = 0.0
    for rank, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def context_recall(attributed: Sequence[bool]) -> float:
    """Attributed statements / statements; 1 when the ground truth has no statement."""
    return share_of(attributed) if attributed else 1.0


def mean_cosine(cosines: Sequence[float]) -> float:
    """The mean cosine of the generated questions with the original one, each clamped to 0-1
    (text embeddings rarely go negative; a negative cosine is no relevance at all)."""
    clamped = [min(max(value, 0.0), 1.0) for value in cosines]
    return sum(clamped) / len(clamped)


def ragas_score(scores: Mapping[str, float | None]) -> float | None:
    """Seed 001's composite: 0.3 faithfulness + 0.2 context precision (ragas's rank-weighted
    one) + 0.2 context recall +
    0.3 answer relevance, the weights renormalised over the scores present; ``None`` when
    none is."""
    present = {name: value for name, value in scores.items() if value is not None}
    weight = sum(RAGAS_WEIGHTS[name] for name in present)
    if not present or weight <= 0:
        return None
    total = sum(RAGAS_WEIGHTS[name] * value for name, value in present.items())
    return round(total / weight, _DECIMALS)


def factual_accuracy(correctness: float, completeness: float, consistency: float) -> float:
    """Seed 001's factual-accuracy weighting of three 0-100 scores, on 0-1."""
    total = (
        FACTUAL_ACCURACY_WEIGHTS["correctness"] * correctness
        + FACTUAL_ACCURACY_WEIGHTS["completeness"] * completeness
        + FACTUAL_ACCURACY_WEIGHTS["consistency"] * consistency
    )
    return round(total / 100, _DECIMALS)


def factual_grade(accuracy: float) -> str:
    """A (≥ 0.8), B (≥ 0.6), C (≥ 0.4), D (≥ 0.2), else E."""
    value = round(accuracy, _DECIMALS)
    for grade, lowest in GRADE_BANDS:
        if value >= lowest:
            return grade
    return LOWEST_GRADE


def scaled(score: float, low: float, high: float) -> float:
    """A score on ``low..high`` as 0-1 (``(score - low) / (high - low)``)."""
    if not high > low or not math.isfinite(score):
        raise ValueError("a scale needs low < high and a finite score")
    return round((score - low) / (high - low), _DECIMALS)
