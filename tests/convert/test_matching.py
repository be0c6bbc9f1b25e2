"""Matching entries to questions: normalisation, scores, confidence bands, conflicts, IDs."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from rag_evaluator.convert.matching import (
    Confidence,
    assign_entries,
    best_candidates,
    confidence_label,
    display_score,
    normalise_question,
)
from rag_evaluator.inputs.shapes import RagEntry, parse_question_id

# A question of 20 distinct letters: replacing k of them with symbols (absent from
# it) leaves a longest common subsequence of 20 - k, so fuzz.ratio is exactly
# 100 * 2 * (20 - k) / 40 = 100 - 5k. With 100 letters each replacement costs 1.
TWENTY = "abcdefghijklmnopqrst"
HUNDRED = (string.ascii_lowercase * 4)[:100]
# Symbols, not digits: a text holding other numbers asks another question.
SYMBOLS = "!#%&*+=<>@"


def replaced(text: str, count: int) -> str:
    """``text`` with its first ``count`` characters replaced by symbols."""
    return "".join(SYMBOLS[i % 10] for i in range(count)) + text[count:]


def entry(question: str | None, answer: str = "an answer", **kwargs: object) -> RagEntry:
    return RagEntry(
        source_file=str(kwargs.pop("source_file", "run.json")),
        location=str(kwargs.pop("location", "item 1")),
        question=question,
        answer=answer,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (100.0, Confidence.PERFECT),
        (99.0, Confidence.PERFECT),
        (98.99, Confidence.GOOD),
        (95.0, Confidence.GOOD),
        (94.99, Confidence.LOW),
        (85.0, Confidence.LOW),
        (84.9, Confidence.FAILED),
        (84.99, Confidence.FAILED),
        (0.0, Confidence.FAILED),
        (float("nan"), Confidence.FAILED),
    ],
)
def test_confidence_bands_at_their_boundaries(score: float, expected: Confidence) -> None:
    assert confidence_label(score) is expected


def test_float_noise_at_a_boundary_does_not_change_the_band() -> None:
    # 17/20 computed in floating point can come out a hair under 85.
    assert confidence_label(84.99999999999999) is Confidence.LOW
    assert confidence_label(94.99999999999999) is Confidence.GOOD


def test_threshold_moves_the_failed_boundary_only() -> None:
    assert confidence_label(87.0, threshold=90) is Confidence.FAILED
    assert confidence_label(82.0, threshold=80) is Confidence.LOW
    assert confidence_label(96.0, threshold=90) is Confidence.GOOD


@pytest.mark.parametrize(
    ("score", "shown"),
    [
        (84.96, "84.9"),
        (85.0, "85.0"),
        (99.99, "99.9"),
        (100.0, "100.0"),
        (84.99999999999999, "85.0"),
    ],
)
def test_display_score_never_rounds_across_a_boundary(score: float, shown: str) -> None:
    assert display_score(score) == shown


def test_normalisation_folds_unicode_case_and_whitespace() -> None:
    assert normalise_question("  ＨＯＷ\tmany\u00a0DAYS?\n") == "how many days?"
    assert normalise_question("Straße") == normalise_question("STRASSE")
    assert normalise_question("ﬁle") == "file"


@pytest.mark.parametrize(
    ("key", "number"),
    [
        ("Q1", 1),
        ("q_1", 1),
        ("1", 1),
        ("Question 1", 1),
        ("question_12", 12),
        ("Q-07", 7),
        ("#3", 3),
        ("Question No. 4", 4),
        ("QID 5", 5),
        ("１０", 10),
        (" q2 ", 2),
    ],
)
def test_id_like_keys_name_a_question_number(key: str, number: int) -> None:
    assert parse_question_id(key) == number


@pytest.mark.parametrize(
    "key", ["Q1 what is it?", "What is Q1?", "Question", "", "q", "1.5", "Q1234567890", "٣"]
)
def test_keys_with_text_are_not_ids(key: str) -> None:
    assert parse_question_id(key) is None


@pytest.mark.parametrize(
    ("question", "variant", "confidence", "shown"),
    [
        (TWENTY, TWENTY, Confidence.PERFECT, "100.0"),
        (HUNDRED, replaced(HUNDRED, 1), Confidence.PERFECT, "99.0"),
        (HUNDRED, replaced(HUNDRED, 2), Confidence.GOOD, "98.0"),
        (TWENTY, replaced(TWENTY, 1), Confidence.GOOD, "95.0"),
        (TWENTY, replaced(TWENTY, 2), Confidence.LOW, "90.0"),
        (TWENTY, replaced(TWENTY, 3), Confidence.LOW, "85.0"),
    ],
)
def test_matches_are_labelled_by_score_band(
    question: str, variant: str, confidence: Confidence, shown: str
) -> None:
    result = assign_entries([entry(variant)], {1: question, 2: "something else entirely"})
    [match] = result.matched
    assert match.question_number == 1
    assert match.confidence is confidence
    assert match.score is not None and display_score(match.score) == shown
    assert result.unmatched == []


def test_a_score_below_the_threshold_is_unmatched_with_its_best_candidate() -> None:
    result = assign_entries([entry(replaced(TWENTY, 4))], {7: TWENTY, 8: "zzzz"})
    assert result.matched == []
    [unmatched] = result.unmatched
    assert unmatched.best_question_number == 7
    assert unmatched.best_score == pytest.approx(80.0)
    message = unmatched.message(85, "questions.csv")
    assert "run.json item 1" in message
    assert "question 7" in message
    assert "at 80.0" in message
    assert message.endswith(
        "below the threshold 85. Add the question to questions.csv or lower --threshold "
        "(entry skipped)"
    )


def test_lowering_the_threshold_accepts_a_closer_miss_as_low() -> None:
    result = assign_entries([entry(replaced(TWENTY, 4))], {7: TWENTY}, threshold=80)
    assert [match.confidence for match in result.matched] == [Confidence.LOW]


def test_matching_ignores_case_spacing_and_width() -> None:
    questions = {1: "How many vacation days do I get?", 2: "Who approves overtime?"}
    result = assign_entries([entry("  how MANY   vacation days do I get？")], questions)
    assert [(m.question_number, m.confidence) for m in result.matched] == [(1, Confidence.PERFECT)]


def test_the_unmatched_warning_shortens_the_question_and_escapes_control_characters() -> None:
    hostile = "\x1b[2J\x1b[31m" + "tell me about the weather on the moon " * 5
    result = assign_entries([entry(hostile)], {1: "How do I book travel?"})
    message = result.unmatched[0].message(85, "questions.csv")
    assert "\x1b" not in message
    assert "\\x1b" in message
    assert "…" in message
    assert len(message) < 400


def test_the_better_match_wins_a_contested_question_wherever_it_was_read() -> None:
    weaker = entry(replaced(TWENTY, 2), answer="weak", source_file="a.json")
    stronger = entry(TWENTY, answer="strong", source_file="b.json")
    result = assign_entries([weaker, stronger], {1: TWENTY})
    assert [match.entry.answer for match in result.matched] == ["strong"]
    [lost] = result.lost_claims
    assert lost.loser.entry.answer == "weak"
    message = lost.message()
    assert "a.json item 1 (at 90.0) also answers question 1" in message
    assert "b.json item 1 (at 100.0) matched better" in message


def test_an_equal_claim_goes_to_the_entry_read_first() -> None:
    first = entry(TWENTY, answer="first", source_file="a.json")
    second = entry(TWENTY, answer="second", source_file="b.json")
    result = assign_entries([first, second], {1: TWENTY})
    assert [match.entry.answer for match in result.matched] == ["first"]
    assert "read first" in result.lost_claims[0].message()


def test_a_text_match_beats_an_id_key_for_the_same_question() -> None:
    by_id = entry(None, answer="by id", question_id=1, location="key 'Q1'")
    by_text = entry(replaced(TWENTY, 3), answer="by text")
    result = assign_entries([by_id, by_text], {1: TWENTY})
    assert [(m.entry.answer, m.confidence) for m in result.matched] == [("by text", Confidence.LOW)]
    assert "wins over an ID key" in result.lost_claims[0].message()


def test_id_keys_map_to_their_number_with_the_id_label() -> None:
    result = assign_entries(
        [entry(None, question_id=2, location="key 'Q2'")], {1: "first", 2: "second"}
    )
    [match] = result.matched
    assert (match.question_number, match.confidence, match.score) == (2, Confidence.ID, None)


def test_an_id_key_for_a_missing_question_is_unmatched() -> None:
    result = assign_entries([entry(None, question_id=42, location="key 'Q42'")], {1: "first"})
    assert result.matched == []
    message = result.unmatched[0].message(85, "questions.csv")
    assert message == (
        "run.json key 'Q42': question number 42 is not in questions.csv. Add question 42 to "
        "questions.csv or correct the key (entry skipped)"
    )


def test_rows_come_out_in_question_number_order() -> None:
    questions = {3: "third question here", 1: "first question here", 2: "second question here"}
    entries = [entry(text) for text in ("third question here", "first question here")]
    entries.append(entry(None, question_id=2))
    result = assign_entries(entries, questions)
    assert [match.question_number for match in result.matched] == [1, 2, 3]


def test_a_tie_between_two_questions_goes_to_the_lower_number() -> None:
    result = assign_entries([entry("same text")], {5: "same text", 2: "same text"})
    assert result.matched[0].question_number == 2


def test_blank_questions_are_never_matched() -> None:
    result = assign_entries([entry("x")], {1: "   ", 2: "x"})
    assert result.matched[0].question_number == 2


short_texts = st.text(alphabet="abcde ?", min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(short_texts, min_size=1, max_size=6), st.lists(short_texts, min_size=1, max_size=6))
def test_best_candidates_agree_with_scoring_every_pair(
    texts: list[str], choices: list[str]
) -> None:
    found = best_candidates(texts, choices)
    for text, best in zip(texts, found, strict=True):
        scores = [fuzz.ratio(text, choice) for choice in choices]
        assert best is not None
        assert best.score == pytest.approx(max(scores))
        assert best.index == scores.index(max(scores))


def test_best_candidates_are_right_across_score_matrix_blocks() -> None:
    rng = random.Random(7)
    words = ["leave", "policy", "travel", "laptop", "badge", "budget", "review", "payroll"]
    choices = [
        " ".join(rng.choice(words) for _ in range(6)) + f" {number}" for number in range(1500)
    ]
    # 3000 texts against 1500 choices do not fit one block of the score matrix.
    texts = [choices[(index * 7) % 1500] + rng.choice(["", "?", "x"]) for index in range(3000)]
    found = best_candidates(texts, choices)
    for index in [*rng.sample(range(3000), 40), 0, 2665, 2666, 2999]:
        scores = [fuzz.ratio(texts[index], choice) for choice in choices]
        best = found[index]
        assert best is not None
        assert best.score == pytest.approx(max(scores))
        assert best.index == scores.index(max(scores))


@pytest.mark.parametrize("empty_answer", ["", "   \n"])
def test_an_empty_answer_loses_to_one_with_text_whatever_was_read_first(
    empty_answer: str,
) -> None:
    # A null answer is read as "" (rag_json_shapes); it was kept over a real answer when
    # read first or matched better.
    empty = entry(TWENTY, answer=empty_answer, source_file="a.json")
    real = entry(replaced(TWENTY, 2), answer="real", source_file="b.json")
    result = assign_entries([empty, real], {1: TWENTY})
    assert [match.entry.answer for match in result.matched] == ["real"]
    [lost] = result.lost_claims
    assert lost.message() == (
        "a.json item 1 (at 100.0) also answers question 1, but its answer is empty and "
        "b.json item 1 (at 90.0) has one; kept that one (entry skipped)"
    )


def test_an_empty_text_match_loses_to_an_id_key_with_an_answer() -> None:
    by_text = entry(TWENTY, answer="")
    by_id = entry(None, answer="by id", question_id=1, location="key 'Q1'")
    result = assign_entries([by_text, by_id], {1: TWENTY})
    assert [match.entry.answer for match in result.matched] == ["by id"]
    assert "its answer is empty and run.json key 'Q1' (by its ID key) has one" in (
        result.lost_claims[0].message()
    )


def test_two_empty_answers_fall_back_to_the_usual_order() -> None:
    first = entry(TWENTY, answer="", source_file="a.json")
    second = entry(TWENTY, answer="", source_file="b.json")
    result = assign_entries([first, second], {1: TWENTY})
    assert result.matched[0].entry.source_file == "a.json"
    assert "read first" in result.lost_claims[0].message()


def brute_force_best(text: str, choices: list[str]) -> tuple[int, float]:
    """The best choice by scoring every pair, the lowest index winning a tie."""
    scores = [round(fuzz.ratio(text, choice), 9) for choice in choices]
    best = max(scores)
    return scores.index(best), best


QUESTION_WORDS = ["leave", "policy", "travel", "laptop", "badge", "budget", "review", "days"]
questions_strategy = st.lists(
    st.lists(st.sampled_from(QUESTION_WORDS), min_size=3, max_size=7).map(" ".join),
    min_size=1,
    max_size=8,
    unique=True,
)


@settings(max_examples=150, deadline=None)
@given(questions_strategy, st.data())
def test_every_decision_is_the_one_scoring_every_pair_gives(
    questions: list[str], data: st.DataObject
) -> None:
    # Damaged copies land on both sides of the threshold; the nearest candidate named for
    # an unmatched entry comes from the same single pass as the matches.
    damage = st.tuples(
        st.sampled_from(questions), st.integers(0, 6), st.sampled_from(["", "s", "?", " days"])
    )
    texts = [
        question[: len(question) - cut] + extra
        for question, cut, extra in data.draw(st.lists(damage, max_size=10))
    ]
    numbered = {number: text for number, text in enumerate(questions, start=1)}
    result = assign_entries(
        [entry(text, location=f"item {i}") for i, text in enumerate(texts)], numbered
    )
    decided = {match.entry.location: match for match in result.matched}
    decided.update({lost.loser.entry.location: lost.loser for lost in result.lost_claims})
    unmatched = {item.entry.location: item for item in result.unmatched}
    for i, text in enumerate(texts):
        index, score = brute_force_best(normalise_question(text), questions)
        location = f"item {i}"
        if score >= 85:
            match = decided[location]
            assert (match.question_number, match.score) == (index + 1, score)
            assert match.confidence is confidence_label(score)
        else:
            item = unmatched[location]
            assert (item.best_question_number, item.best_score) == (index + 1, score)


@pytest.mark.parametrize(
    ("text", "question"),
    [
        (
            "What was the total revenue of Acme in 2023?",
            "What was the total revenue of Acme in 2022?",
        ),
        ("What is the limit for item 11?", "What is the limit for item 1?"),
        ("How many days off after 10 years?", "How many days off after 5 years?"),
    ],
)
def test_a_question_holding_other_numbers_is_another_question(text: str, question: str) -> None:
    # Close enough to be GOOD by text alone, but a different year, item or count.
    assert fuzz.ratio(normalise_question(text), normalise_question(question)) >= 85
    result = assign_entries([entry(text)], {1: question})
    assert result.matched == []
    [unmatched] = result.unmatched
    assert unmatched.best_question_number == 1 and unmatched.other_numbers
    assert "holds other numbers" in unmatched.message(85, "questions.csv")


def test_the_best_question_holding_the_same_numbers_is_taken() -> None:
    questions = {1: "What is the fee for plan 2 in 2022?", 2: "What's the fee for plan 2 in 2023?"}
    result = assign_entries([entry("What is the fee for plan 2 in 2023?")], questions)
    [match] = result.matched
    assert match.question_number == 2


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("1. What is the capital of France?", "What is the capital of France?"),
        ("Q3: How much is 1,000 plus 1?", "How much is 1000 plus 1?"),
        ("What does rule 007 say?", "What does rule 7 say?"),
        # A number spelled out on one side contradicts nothing.
        ("Which fare for flights under 6 hours?", "Which fare for flights under six hours?"),
    ],
)
def test_list_labels_separators_and_leading_zeros_are_not_other_numbers(
    text: str, question: str
) -> None:
    result = assign_entries([entry(text)], {1: question})
    assert [match.question_number for match in result.matched] == [1]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_a_templated_question_matches_only_its_own_number(asked: int, other: int) -> None:
    result = assign_entries(
        [entry(f"What is the limit for item {asked}?")], {1: f"What is the limit for item {other}?"}
    )
    assert bool(result.matched) == (asked == other)
