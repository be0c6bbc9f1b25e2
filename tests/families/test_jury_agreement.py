"""Agreement between jurors: percent agreement, Cohen's and Fleiss' kappa (against
scikit-learn and statsmodels)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from rag_evaluator.families.jury.agreement import (
    cohen_kappa,
    fleiss_kappa,
    passes,
    percent_agreement,
)


@st.composite
def rating_tables(draw: st.DrawFn) -> list[list[int]]:
    jurors = draw(st.integers(2, 7))
    categories = draw(st.integers(1, 4))
    rows = draw(st.integers(0, 40))
    return [
        draw(st.lists(st.integers(0, categories - 1), min_size=jurors, max_size=jurors))
        for _ in range(rows)
    ]


@st.composite
def rating_pairs(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    size = draw(st.integers(0, 40))
    categories = draw(st.integers(1, 4))
    ratings = st.lists(st.integers(0, categories - 1), min_size=size, max_size=size)
    return draw(ratings), draw(ratings)


def _reference_fleiss(table: list[list[int]]) -> float:
    counts, _ = aggregate_raters(np.array(table))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return float(statsmodels_fleiss(counts, method="fleiss"))


@given(rating_tables())
def test_fleiss_kappa_matches_statsmodels(table: list[list[int]]) -> None:
    kappa = fleiss_kappa(table)
    if len(table) < 2 or len({rating for row in table for rating in row}) < 2:
        assert kappa is None
        return
    assert kappa == pytest.approx(_reference_fleiss(table), abs=1e-9)


@given(rating_pairs())
def test_cohen_kappa_matches_scikit_learn(pair: tuple[list[int], list[int]]) -> None:
    first, second = pair
    kappa = cohen_kappa(first, second)
    if not first or len(set(first) | set(second)) < 2:
        assert kappa is None
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = cohen_kappa_score(first, second)
    assert kappa == pytest.approx(expected, abs=1e-9)


@given(rating_pairs())
def test_percent_agreement_is_the_share_rated_alike(pair: tuple[list[int], list[int]]) -> None:
    first, second = pair
    expected = (
        sum(a == b for a, b in zip(first, second, strict=True)) / len(first) if first else None
    )
    assert percent_agreement(first, second) == expected


def test_worked_examples() -> None:
    # Two of three jurors agree on each of four questions; all three agree on none.
    table = [[1, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 0]]
    # P_i = 1/3 each, P_e = 1/2: (1/3 - 1/2) / (1/2).
    assert fleiss_kappa(table) == pytest.approx(-1 / 3)
    assert fleiss_kappa([[1, 1, 1], [0, 0, 0]]) == pytest.approx(1.0)
    assert fleiss_kappa([[1, 1, 1], [1, 1, 1]]) is None  # chance agreement 1
    assert fleiss_kappa([[1, 0, 1]]) is None  # one question
    assert fleiss_kappa([]) is None
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.5)
    assert cohen_kappa([1, 1], [1, 1]) is None
    assert percent_agreement([], []) is None


def test_scores_pass_at_one_half() -> None:
    assert [passes(score) for score in (0.0, 0.49, 0.5, 1.0)] == [0, 0, 1, 1]


def test_ratings_of_different_questions_are_refused() -> None:
    with pytest.raises(ValueError, match="same questions"):
        cohen_kappa([1, 0], [1])
    with pytest.raises(ValueError, match="table"):
        fleiss_kappa([1, 0, 1])
