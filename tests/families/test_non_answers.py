"""Abstentions and refusals as real systems write them: one list, read by dont_know, the
quality family, the judge's no-information rule and the report's diagnostics alike."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.offline import quality
from rag_evaluator.offline.lexical import dont_know
from rag_evaluator.offline.registry import LEXICAL, QUALITY
from rag_evaluator.offline.runner import MetricOptions, compute_offline_metrics
from rag_evaluator.report.diagnostics import QuestionEvidence, says_dont_know
from rag_evaluator.text.no_information import both_say_no_information, says_no_information
from rag_evaluator.text.non_answers import SEED_UNCERTAINTY_PHRASES, non_answer_phrase

# Whole answers that only give up: the three, and others in the forms systems use.
GIVING_UP = [
    "Sorry - this model is unable to respond to this request.",
    "The model cannot find sufficient information in the provided documents to answer "
    "this question.",
    "I do not have specific information.",
    "I'm sorry, but I can't help with that request.",
    "Unfortunately, the provided context does not mention the opening hours.",
    "The retrieval date is not mentioned in the provided documents.",
    "I am not able to answer this question.",
    "There is no mention of a pet policy in the documents.",
    "No relevant information was found.",
    "As an AI language model, I do not have access to real-time information.",
    "I don\u2019t have enough information to answer that.",
    "The answer cannot be determined from the context.",
]
# Answers that answer, though some words look alike.
ANSWERING = [
    "The premium is $604 for Territory 118.",
    "I won't give up, I will climb the peak.",
    "I couldn't help but smile at the view.",
    "The battery cannot provide power below -20 C.",
    "The handbook does not apply to contractors; they follow their own agreement.",
    "Several unknowns remain, but the rate is 5%.",
    "There is no database migration to run.",
]


@pytest.mark.parametrize("answer", GIVING_UP)
def test_every_check_sees_an_answer_that_gives_up(answer: str) -> None:
    assert non_answer_phrase(answer) is not None
    assert dont_know(answer) == 1.0
    assert quality.no_fallback(answer) == 0
    assessment = quality.assess_answer("When does it open?", answer, None)
    assert assessment.passed == 0 and quality.NO_FALLBACK in assessment.failures
    evidence = QuestionEvidence(1, answer, "At 9 am.", {})
    assert says_dont_know(evidence, None)


@pytest.mark.parametrize("answer", ANSWERING)
def test_answers_that_answer_are_not_taken_for_giving_up(answer: str) -> None:
    assert non_answer_phrase(answer) is None
    assert dont_know(answer) == 0.0
    assert quality.no_fallback(answer) == 1
    assert not says_no_information(answer)


@pytest.mark.parametrize("statement", GIVING_UP)
def test_the_judge_skips_a_question_both_sides_say_they_cannot_answer(statement: str) -> None:
    assert says_no_information(statement)
    assert both_say_no_information(statement, "No information is available.")
    assert not both_say_no_information(statement, "It opens at 9 am.")


def test_a_refusal_followed_by_an_answer_is_not_a_no_information_statement() -> None:
    answer = "I do not have specific information, but the store opens at 9 am on weekdays."
    assert dont_know(answer) == 1.0  # it does say so
    assert not says_no_information(answer)  # but it also answers: the judge decides


def test_seed_001s_phrases_are_all_still_found() -> None:
    for phrase in SEED_UNCERTAINTY_PHRASES:
        assert dont_know(f"Well, {phrase} here.") == 1.0, phrase


def test_own_fallback_phrases_replace_the_defaults_patterns_included() -> None:
    own = quality.FallbackPhrases.for_option(("Service unavailable",))
    assert quality.no_fallback("Service unavailable, retry.", own) == 0
    assert quality.no_fallback("I do not have specific information.", own) == 1
    defaults = quality.FallbackPhrases.for_option(quality.DEFAULT_FALLBACK_PHRASES)
    assert quality.no_fallback("I do not have specific information.", defaults) == 0


def test_the_offline_run_flags_refusals_in_lexical_and_quality() -> None:
    items = [
        EvaluationItem(1, "When does it open?", "At 9 am.", GIVING_UP[0], contexts=["x"]),
        EvaluationItem(
            2, "When does it open?", "At 9 am.", "It opens at 9 am [1].", contexts=["x"]
        ),
    ]
    scores = compute_offline_metrics(items, [LEXICAL, QUALITY], MetricOptions()).scores
    assert scores[1]["dont_know"] == 1.0
    assert scores[1][quality.NO_FALLBACK] == 0 and scores[1][quality.PASS] == 0
    assert scores[2]["dont_know"] == 0.0
    assert scores[2][quality.NO_FALLBACK] == 1 and scores[2][quality.PASS] == 1


@given(st.text(max_size=300))
def test_detection_never_fails_and_agrees_between_checks(text: str) -> None:
    found = non_answer_phrase(text) is not None
    if found:
        assert dont_know(text) == 1.0
        assert quality.no_fallback(text) in (0, None)
    if says_no_information(text):
        assert found
