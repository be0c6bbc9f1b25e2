"""Which questions are evaluated and in what order; the no-information shortcut."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.records import (
    AnswerRow,
    EvaluationItem,
    GroundTruthRow,
    KeyedRows,
    QuestionRow,
)
from rag_evaluator.inputs.selection import (
    exclusion_warnings,
    format_numbers,
    join_rows,
    select_items,
    shuffled_order,
)
from rag_evaluator.text.no_information import both_say_no_information, says_no_information


def _files(
    question_numbers: list[int], truth_numbers: list[int], answer_numbers: list[int]
) -> tuple[KeyedRows[QuestionRow], KeyedRows[GroundTruthRow], KeyedRows[AnswerRow]]:
    return (
        KeyedRows("questions.csv", {n: QuestionRow(n, f"q{n}") for n in question_numbers}),
        KeyedRows(
            "ground_truth.csv",
            {n: GroundTruthRow(n, f"gt{n}", required_facts=["f"]) for n in truth_numbers},
        ),
        KeyedRows(
            "rag_answers.csv", {n: AnswerRow(n, f"a{n}", contexts=["c"]) for n in answer_numbers}
        ),
    )


def test_each_field_of_an_item_comes_from_its_row() -> None:
    question = QuestionRow(4, "q4", {"Category": "pay"})
    truth = GroundTruthRow(4, "gt4", relevant_contexts=["golden"], required_facts=["fact"])
    answer = AnswerRow(4, "a4", contexts=["c1", "c2"], retrieval_scores=(0.9, 0.4))
    assert join_rows(question, truth, answer) == EvaluationItem(
        question_number=4,
        question="q4",
        ground_truth="gt4",
        rag_answer="a4",
        contexts=["c1", "c2"],
        relevant_contexts=["golden"],
        required_facts=["fact"],
        answer_missing=False,
        retrieval_scores=(0.9, 0.4),
        metadata={"Category": "pay"},
    )
    assert join_rows(question, truth, None) == EvaluationItem(
        question_number=4,
        question="q4",
        ground_truth="gt4",
        rag_answer="",
        relevant_contexts=["golden"],
        required_facts=["fact"],
        answer_missing=True,
        metadata={"Category": "pay"},
    )


def test_the_intersection_is_evaluated_and_exclusions_name_the_missing_file() -> None:
    selection = select_items(*_files([1, 2, 3, 4, 5], [1, 2, 3, 5, 6], [2, 3, 4, 5]))
    assert [item.question_number for item in selection.items] == [2, 3, 5]
    item = selection.items[0]
    assert (item.question, item.ground_truth, item.rag_answer) == ("q2", "gt2", "a2")
    assert item.contexts == ["c"]
    assert item.required_facts == ["f"]
    assert exclusion_warnings(selection.exclusions) == [
        "Left out question 1: not in rag_answers.csv",
        "Left out question 4: not in ground_truth.csv",
        "Left out question 6: not in questions.csv or rag_answers.csv",
    ]


def test_many_excluded_numbers_are_shown_as_ranges() -> None:
    selection = select_items(*_files(list(range(1, 21)), list(range(1, 21)), [1, 2, 20]))
    assert exclusion_warnings(selection.exclusions) == [
        "Left out questions 3-19: not in rag_answers.csv"
    ]


def test_no_common_question_is_an_input_error_listing_each_file() -> None:
    with pytest.raises(InputError) as raised:
        select_items(*_files([1, 2], [3], [4, 5, 6]))
    message = raised.value.message
    assert "questions.csv: 1-2" in message
    assert "ground_truth.csv: 3" in message
    assert "rag_answers.csv: 4-6" in message
    assert "same numbers" in message


@given(st.sets(st.integers(0, 10_000), max_size=60))
def test_format_numbers_lists_every_number_once(numbers: set[int]) -> None:
    expanded: list[int] = []
    for part in filter(None, format_numbers(numbers).split(", ")):
        start, _, end = part.partition("-")
        expanded += range(int(start), int(end or start) + 1)
    assert expanded == sorted(numbers)


@given(st.sets(st.integers(0, 10_000), min_size=1, max_size=60), st.integers(1, 20))
def test_format_numbers_with_a_limit_lists_the_first_and_counts_the_rest(
    numbers: set[int], limit: int
) -> None:
    ordered = sorted(numbers)
    hidden = max(0, len(ordered) - limit)
    text = format_numbers(numbers, limit)
    if hidden:
        assert text == f"{format_numbers(ordered[:limit])} and {hidden} more"
    else:
        assert text == format_numbers(numbers)


def test_format_numbers_with_a_limit_shortens_the_shown_runs() -> None:
    assert format_numbers([9, 1, 2, 3, 5, 11, 12], limit=5) == "1-3, 5, 9 and 2 more"


@given(st.sets(st.integers(1, 500), min_size=1, max_size=50), st.integers(0, 2**32))
def test_the_order_is_a_permutation_fixed_by_the_seed(numbers: set[int], seed: int) -> None:
    order = shuffled_order(numbers, seed)
    assert sorted(order) == sorted(numbers)
    assert shuffled_order(list(reversed(sorted(numbers))), seed) == order


def test_different_seeds_give_different_orders() -> None:
    numbers = range(1, 31)
    assert shuffled_order(numbers, 1) != shuffled_order(numbers, 2)
    assert shuffled_order(numbers, 1) != sorted(numbers)


@pytest.mark.parametrize(
    "text",
    [
        "I don't know.",
        "I do not know",
        "I don\u2019t know the answer to this question.",
        "No information available.",
        "No information found in the provided context.",
        "Sorry, I could not find any relevant information about this question.",
        "The answer is not available in the provided documents.",
        "The context does not contain enough information to answer the question.",
        "I don't know. No information is available.",
    ],
)
def test_plain_no_information_statements_are_recognised(text: str) -> None:
    assert says_no_information(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Paris",
        "No.",
        "None",
        "Unknown",
        "I don't know, but probably Paris.",
        "No information about pricing is public, but it costs 5 dollars.",
        "The report does not say.",
        "I don't know. I don't know. I don't know.",
        "I don't know " + "really " * 40,
    ],
)
def test_anything_else_is_not_a_no_information_statement(text: str) -> None:
    assert not says_no_information(text)


def test_the_shortcut_needs_both_texts_to_say_so() -> None:
    assert both_say_no_information("I don't know.", "No information available.")
    assert not both_say_no_information("I don't know.", "The capital is Paris.")
    assert not both_say_no_information("Paris.", "No information available.")


@given(st.text(min_size=201, max_size=400))
def test_long_texts_are_never_no_information_statements(text: str) -> None:
    assert not says_no_information("I don't know. " + text)
