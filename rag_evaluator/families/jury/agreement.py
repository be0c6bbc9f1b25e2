"""How far a jury's jurors agree on one metric over the questions they all rated.

Ratings are categories (whole numbers); a score (0-1) is first binarised: it passes when it
is at least ``PASS_THRESHOLD``. Only questions every compared juror rated count.

- **Percent agreement** of two jurors: the share of questions they rated alike.
- **Cohen's kappa** of two jurors: (p_o - p_e) / (1 - p_e), p_o the observed agreement,
  p_e = Σ_c a_c·b_c from each juror's own share of each category.
- **Fleiss' kappa** of all jurors (Fleiss 1971): (P̄ - P_e) / (1 - P_e), P̄ the mean over
  questions of the share of agreeing juror pairs, P_e = Σ_c p_c², p_c the share of all
  ratings in category c.

*Decisions:* a kappa is undefined (``None``) when chance agreement is 1 (every rating in one
category: kappa would be 0/0), with no question, and for Fleiss with fewer than two
questions or two jurors (one question's kappa measures nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

PASS_THRESHOLD = 0.5


def passes(score: float) -> int:
    """A score binarised for agreement: 1 when it is at least ``PASS_THRESHOLD``, else 0."""
    return 1 if score >= PASS_THRESHOLD else 0


def percent_agreement(
    first: Sequence[int] | ArrayLike, second: Sequence[int] | ArrayLike
) -> float | None:
    """The share of questions two jurors rated alike; ``None`` with no question."""
    a, b = _pair(first, second)
    if a.size == 0:
        return None
    return float(np.mean(a == b))


def cohen_kappa(
    first: Sequence[int] | ArrayLike, second: Sequence[int] | ArrayLike
) -> float | None:
    """Cohen's kappa of two jurors' ratings of the same questions (unweighted); ``None`` when
    undefined (no question, or both jurors gave one and the same category throughout)."""
    a, b = _pair(first, second)
    if a.size == 0:
        return None
    categories = np.union1d(a, b)
    if categories.size < 2:
        return None
    observed = float(np.mean(a == b))
    shares_a = np.array([np.mean(a == category) for category in categories])
    shares_b = np.array([np.mean(b == category) for category in categories])
    expected = float(np.dot(shares_a, shares_b))
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(ratings: Sequence[Sequence[int]] | ArrayLike) -> float | None:
    """Fleiss' kappa of a table of ratings: a row per question, a column per juror, each cell
    that juror's category. ``None`` when undefined (fewer than two questions or two jurors,
    or every rating in one category)."""
    table = np.asarray(ratings)
    if table.ndim != 2:
        if table.size == 0:
            return None
        raise ValueError("ratings must be a table: one row per question, one column per juror")
    questions, jurors = table.shape
    if questions < 2 or jurors < 2:
        return None
    categories = np.unique(table)
    if categories.size < 2:
        return None
    # counts[i, c]: how many jurors put question i in category c.
    counts = np.stack([(table == category).sum(axis=1) for category in categories], axis=1)
    agreeing_pairs = (counts * (counts - 1)).sum(axis=1) / (jurors * (jurors - 1))
    observed = float(agreeing_pairs.mean())
    shares = counts.sum(axis=0) / (questions * jurors)
    expected = float(np.dot(shares, shares))
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def _pair(
    first: Sequence[int] | ArrayLike, second: Sequence[int] | ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(first).ravel(), np.asarray(second).ravel()
    if a.shape != b.shape:
        raise ValueError("two jurors' ratings must cover the same questions")
    return a, b
