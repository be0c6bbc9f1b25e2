"""The formulas of the LLM-judged families (seed 001): computed here, never by the model."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.families import scores as judged_scores
from rag_evaluator.families.scores import (
    RAGAS_WEIGHTS,
    context_recall,
    factual_accuracy,
    factual_grade,
    faithfulness,
    mean_cosine,
    ragas_score,
    ranked_context_precision,
    relevant_context_share,
    scaled,
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_faithfulness_is_supported_over_claims_and_1_without_a_claim() -> None:
    assert faithfulness([True, True, False]) == pytest.approx(2 / 3)
    assert faithfulness([False]) == 0.0
    assert faithfulness([]) == 1.0


def test_context_recall_is_attributed_over_statements_and_1_without_a_statement() -> None:
    assert context_recall([True, False]) == 0.5
    assert context_recall([]) == 1.0


def test_the_relevant_context_share_is_a_plain_share_and_undefined_without_contexts() -> None:
    assert relevant_context_share([True, False, True, False]) == 0.5
    assert relevant_context_share([]) is None


@pytest.mark.parametrize(
    ("relevant", "expected"),
    [
        ([True, True, False, False], 1.0),  # relevant ones first: perfect ranking
        ([False, False, True, True], (1 / 3 + 2 / 4) / 2),
        ([True, False, True], (1 / 1 + 2 / 3) / 2),
        ([False, False], 0.0),
        ([], None),
    ],
)
def test_ranked_context_precision_is_average_precision(
    relevant: list[bool], expected: float | None
) -> None:
    result = ranked_context_precision(relevant)
    assert result == (pytest.approx(expected) if expected is not None else None)


@given(st.lists(st.booleans(), min_size=1, max_size=30))
def test_ranking_the_relevant_contexts_first_never_lowers_average_precision(
    relevant: list[bool],
) -> None:
    best = sorted(relevant, reverse=True)
    ranked, ideal = ranked_context_precision(relevant), ranked_context_precision(best)
    assert ranked is not None and ideal is not None
    assert 0.0 <= ranked <= ideal <= 1.0
    # The unranked share never depends on the order.
    assert relevant_context_share(relevant) == relevant_context_share(best)


def test_mean_cosine_clamps_each_cosine_to_0_1() -> None:
    assert mean_cosine([0.9, 0.6, -0.3]) == pytest.approx((0.9 + 0.6 + 0.0) / 3)
    assert mean_cosine([1.0000001]) == 1.0


def test_ragas_score_uses_seed_weights_renormalised_over_present_scores() -> None:
    # Seed 001's worked example: context precision missing, 100 / 100 / 83.27 -> 93.73.
    score = ragas_score(
        {
            "faithfulness": 1.0,
            "context_precision": None,
            "context_recall": 1.0,
            "answer_relevance": 0.8327,
        }
    )
    assert score == pytest.approx((0.3 * 1.0 + 0.2 * 1.0 + 0.3 * 0.8327) / 0.8)
    assert round(score * 100, 2) == 93.73
    all_four = {
        "faithfulness": 0.5,
        "context_precision": 1,
        "context_recall": 0,
        "answer_relevance": 1,
    }
    assert ragas_score(all_four) == pytest.approx(0.3 * 0.5 + 0.2 + 0 + 0.3)
    assert ragas_score({"answer_relevance": 0.4}) == pytest.approx(0.4)
    assert ragas_score({name: None for name in RAGAS_WEIGHTS}) is None
    assert ragas_score({}) is None


@given(st.fixed_dictionaries({name: st.none() | unit for name in RAGAS_WEIGHTS}))
def test_ragas_score_lies_between_the_scores_present(scores: dict[str, float | None]) -> None:
    present = [value for value in scores.values() if value is not None]
    result = ragas_score(scores)
    if not present:
        assert result is None
    else:
        assert result is not None
        assert min(present) - 1e-9 <= result <= max(present) + 1e-9


def test_weights_are_the_seeds() -> None:
    assert RAGAS_WEIGHTS == {
        "faithfulness": 0.3,
        "context_precision": 0.2,
        "context_recall": 0.2,
        "answer_relevance": 0.3,
    }
    assert judged_scores.FACTUAL_ACCURACY_WEIGHTS == {
        "correctness": 0.5,
        "completeness": 0.3,
        "consistency": 0.2,
    }


def test_factual_accuracy_weights_three_0_100_scores_onto_0_1() -> None:
    assert factual_accuracy(80, 60, 40) == pytest.approx(0.66)
    assert factual_accuracy(100, 100, 100) == 1.0
    assert factual_accuracy(0, 0, 0) == 0.0


@pytest.mark.parametrize(
    ("scores", "grade"),
    [
        ((80, 80, 80), "A"),  # exactly 0.8 despite floating point: an A
        ((79, 80, 80), "B"),
        ((60, 60, 60), "B"),
        ((40, 40, 40), "C"),
        ((20, 20, 20), "D"),
        ((19, 20, 20), "E"),
        ((0, 0, 0), "E"),
        ((100, 0, 0), "C"),  # 0.5
    ],
)
def test_grade_bands_are_the_seeds(scores: tuple[int, int, int], grade: str) -> None:
    assert factual_grade(factual_accuracy(*scores)) == grade


@given(st.integers(0, 100), st.integers(0, 100), st.integers(0, 100))
def test_grades_follow_the_accuracy_in_order(
    correctness: int, completeness: int, consistency: int
) -> None:
    accuracy = factual_accuracy(correctness, completeness, consistency)
    assert 0.0 <= accuracy <= 1.0
    expected = next(
        (
            grade
            for grade, lowest in judged_scores.GRADE_BANDS
            if 1000 * accuracy >= 1000 * lowest - 1e-6
        ),
        "E",
    )
    assert factual_grade(accuracy) == expected


def test_scaled_maps_a_scale_onto_0_1() -> None:
    assert scaled(4, 1, 5) == 0.75
    assert scaled(1, 1, 5) == 0.0
    assert scaled(10, 0, 10) == 1.0
    with pytest.raises(ValueError):
        scaled(1, 5, 5)
    with pytest.raises(ValueError):
        scaled(math.nan, 0, 1)
