"""How a jury combines its jurors' values of one metric for one question.

A juror without a value (its call failed, or the metric is undefined for it) is left out;
what remains decides. A rate (0/1) goes to the majority, a tie to no value; a score to the
median; a label to the plurality, a tie to no label.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence


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
