"""Overlap metrics pinned to the values the libraries' authors published."""

from __future__ import annotations

import pytest

from rag_evaluator.metrics import bleu_score, rouge_score, rouge_scores

# sacreBLEU's test_sentence_bleu.py (example from its issue #98): sentence BLEU with the
# default exp smoothing and 13a tokenizer is 8.493 (tolerance 1e-3 on the 0-100 scale).
SACREBLEU_REFERENCE = "producţia de zahăr brut se exprimă în zahăr alb;"
SACREBLEU_HYPOTHESIS = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"


def test_bleu_is_sacrebleu_sentence_bleu_divided_by_100() -> None:
    score = bleu_score(SACREBLEU_HYPOTHESIS, [SACREBLEU_REFERENCE])
    assert score == pytest.approx(0.08493, abs=1e-5)


def test_bleu_without_any_shared_ngram_is_zero() -> None:
    # sacreBLEU's test_api_sentence_bleu_zero (issue #141).
    assert bleu_score("this is a cat", ["okay thanks"]) == 0.0


def test_bleu_of_an_identical_sentence_is_one() -> None:
    assert bleu_score("The dog bit the man.", ["The dog bit the man."]) == pytest.approx(1.0)


def test_bleu_takes_the_best_of_several_references() -> None:
    one = bleu_score("The dog bit the man.", ["It was not unexpected."])
    both = bleu_score("The dog bit the man.", ["It was not unexpected.", "The dog bit the man."])
    assert one is not None and both is not None
    assert both > one


# rouge-score's rouge_scorer_test.py: score(target, prediction); ours is (answer, reference).
@pytest.mark.parametrize(
    ("answer", "reference", "key", "expected"),
    [
        ("testing", "testing one two", "rouge1", 1 / 2),  # testRouge1: P 1, R 1/3
        ("testing one", "testing one two", "rouge2", 2 / 3),  # testRouge2: P 1, R 1/2
        ("testing one", "testing one two", "rougeL", 4 / 5),  # testRougeLConsecutive
        ("testing two", "testing one two", "rougeL", 4 / 5),  # testRougeLNonConsecutive
        ("testing one", "testing one two", "rouge1", 4 / 5),  # testMultipleRougeTypes
    ],
)
def test_rouge_matches_rouge_score_own_expectations(
    answer: str, reference: str, key: str, expected: float
) -> None:
    scores = rouge_scores(answer, reference)
    assert scores is not None
    assert scores[key] == pytest.approx(expected)


def test_rouge_stems_words() -> None:
    # Porter stemming makes "cats" and "cat", "running" and "run" the same unigram.
    scores = rouge_scores("cats running", "cat run")
    assert scores is not None
    assert scores["rouge1"] == pytest.approx(1.0)


def test_rouge_of_an_empty_answer_is_zero() -> None:
    # rouge-score's testRougeEmpty: an empty prediction scores 0.
    assert rouge_scores("", "testing one two") == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}


def test_rouge_score_keeps_the_seed_name() -> None:
    assert rouge_score("testing", "testing one two") == rouge_scores("testing", "testing one two")
