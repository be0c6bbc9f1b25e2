"""The jury's per-metric vote: majority of 0/1 values, median of scores, plurality of labels."""

from __future__ import annotations

import statistics
from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.families.jury.voting import majority_rate, median_score, plurality_label

RATES = st.lists(st.sampled_from([0.0, 1.0, None]), max_size=9)
SCORES = st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=9)
LABELS = st.lists(st.sampled_from(["CORRECT", "WRONG", "DONT_KNOW", None]), max_size=9)


@given(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=9).filter(lambda v: len(v) % 2))
def test_the_majority_of_an_odd_number_of_values_is_their_rounded_mean(values: list[float]) -> None:
    assert majority_rate(values) == round(sum(values) / len(values))


@given(RATES, st.randoms(use_true_random=False))
def test_the_majority_ignores_the_order_of_the_jurors(
    values: list[float | None], random: Random
) -> None:
    shuffled = list(values)
    random.shuffle(shuffled)
    assert majority_rate(shuffled) == majority_rate(values)


@given(RATES)
def test_jurors_without_a_value_are_left_out_and_a_tie_has_no_majority(
    values: list[float | None],
) -> None:
    present = [value for value in values if value is not None]
    ones = sum(present)
    expected = None if ones * 2 == len(present) else float(ones * 2 > len(present))
    assert majority_rate(values) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1, 1, 0], 1.0),
        ([0, 0, 1], 0.0),
        ([1, None, 0], None),
        ([None, None, None], None),
        ([], None),
        ([None, 1, None], 1.0),
    ],
)
def test_majority_examples(values: list[float | None], expected: float | None) -> None:
    assert majority_rate(values) == expected


@given(SCORES, st.randoms(use_true_random=False))
def test_the_median_is_the_median_of_the_values_present_in_any_order(
    values: list[float | None], random: Random
) -> None:
    present = [value for value in values if value is not None]
    shuffled = list(values)
    random.shuffle(shuffled)
    expected = statistics.median(present) if present else None
    assert median_score(shuffled) == expected
    assert median_score(values) == expected


def test_median_examples() -> None:
    assert median_score([0.2, None, 0.9, 0.4]) == 0.4
    assert median_score([0.2, 0.9, 0.4, 0.6]) == pytest.approx(0.5)
    assert median_score([None, None]) is None
    assert median_score([]) is None


@given(LABELS, st.randoms(use_true_random=False))
def test_the_plurality_is_the_one_most_given_label_in_any_order(
    labels: list[str | None], random: Random
) -> None:
    given_labels = [label for label in labels if label is not None]
    counts = {label: given_labels.count(label) for label in set(given_labels)}
    top = max(counts.values(), default=0)
    leaders = [label for label, count in counts.items() if count == top]
    expected = leaders[0] if len(leaders) == 1 else None
    shuffled = list(labels)
    random.shuffle(shuffled)
    assert plurality_label(shuffled) == expected
    assert plurality_label(labels) == expected


def test_plurality_examples() -> None:
    assert plurality_label(["CORRECT", "WRONG", "CORRECT"]) == "CORRECT"
    assert plurality_label(["CORRECT", "WRONG", None]) is None
    assert plurality_label(["CORRECT", "WRONG", "DONT_KNOW"]) is None
    assert plurality_label([None, None, "WRONG"]) == "WRONG"
    assert plurality_label([]) is None
