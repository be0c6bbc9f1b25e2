"""How a jury combines its jurors' values of one metric for one question.

A juror without a value (its call failed, or the metric is undefined for it) is left out;
what remains decides. A rate (0/1) goes to the majority, a tie to no value; a score to the
median; a label to the plurality, a tie to no label.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

from rag_evaluator.families.base import FamilyResult
from rag_evaluator.llm.requests import FailureKind

T = TypeVar("T", bound=Hashable)


def majority_rate(values: Sequence[float | None]) -> float | None:
    """1.0 or 0.0, whichever most of the jurors with a value gave; ``None`` on a tie or when
    no juror has a value (0/1 values: anything else counts as 1 when it is at least 0.5)."""
    ones = zeros = 0
    for value in values:
        if value is None:
            continue
        if value >= 0.5:
            ones += 1
        else:
            zeros += 1
    if ones == zeros:
        return None
    return 1.0 if ones > zeros else 0.0


def median_score(values: Sequence[float | None]) -> float | None:
    """The median of the jurors' values (the mean of the middle two for an even count);
    ``None`` when no juror has a value."""
    present = [value for value in values if value is not None]
    if not present:
        return None
    return float(statistics.median(present))


def plurality_label(labels: Sequence[str | None]) -> str | None:
    """The label most jurors gave; ``None`` when two or more labels tie for the most, or no
    juror gave one."""
    counts = Counter(label for label in labels if label is not None)
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def nearest_juror(values: Sequence[float | None], verdict: float | None) -> int | None:
    """The position of the first juror whose value is nearest the verdict's (equal to it for
    a rate): the juror whose reasoning the verdict keeps. With no verdict (a tie), the first
    juror with a value; ``None`` when no juror has one."""
    best: int | None = None
    best_distance = math.inf
    for position, value in enumerate(values):
        if value is None:
            continue
        distance = 0.0 if verdict is None else abs(value - verdict)
        if distance < best_distance:
            best, best_distance = position, distance
    return best


def whole_median(values: Sequence[int | None]) -> int | None:
    """``median_score`` of whole-number scores as a whole number: with an odd count it is a
    juror's score; the mean of the middle two is rounded half up."""
    median = median_score(values)
    return None if median is None else math.floor(median + 0.5)


def common_value(values: Iterable[T]) -> T | None:
    """The value every juror shares (a note, a shortcut); ``None`` when they differ."""
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def first_failure(results: Sequence[FamilyResult]) -> tuple[str, str]:
    """The error and failure kind of the first unscored juror: the verdict's when no juror
    scored."""
    for result in results:
        if result.error is not None:
            return result.error, result.failure or FailureKind.QUESTION.value
    return "no juror judged this question", FailureKind.QUESTION.value
