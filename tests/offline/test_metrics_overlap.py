"""Overlap metrics pinned to the values the libraries' authors published."""

from __future__ import annotations

import pytest

from rag_evaluator.metrics import bleu_score, rouge_score, rouge_scores

pytestmark = pytest.mark.needs_extra("overlap")

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


# rouge-score's testRouge{1,2}AgainstRouge155WithStemming: lines 1 and 2 of its
# testdata/target.txt and prediction.txt, scored by the official ROUGE-1.5.5 with stemming.
# The second pair is where stemming shows: unstemmed ROUGE-1 F1 is 0.50000 there.
ROUGE155_TARGETS = (
    "ZfbCUIUuePaiLVUlCaUXxkpu XPeWing tUHfPMuZ',-Xd Y BrUgVJing M-HV.-DgdDaY.rFDJCRing "
    "Ht-LM EKBDXkME,yz'RBr q'wtion wIojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxer tKM L",
    "KsJdPByEtAor fE-Qg Dpdbring cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMtion psing "
    "sbKao Q m qiing LMmer HqqLFXe,XPY,J XsurkMer ,ed nB'wH'bWVHjWFEing "
    "tQ.saefZwJtKrTlixYpMMsJing UCAPwNHeYVjDing c T BUySKtion gMPfJpwGw p'NvxAoping eu "
    "pBwMBKV'I DNxqelhu,PHPxDEq,mtion SN",
)
ROUGE155_PREDICTIONS = (
    "rFDJCRtion Ht-LM EKtDXkME,yz'RBr q'wer wrojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxi",
    "n cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMer pstion sbKao Q m qier LMmed "
    "HqqLFXe,XPY,J XsurkMeo ,ed nB'wH'bWVHjWFEer tQ.saefZwJtKrTlixYpMMNJtion UCAPwNHeYVjD",
)


@pytest.mark.parametrize(
    ("line", "rouge1", "rouge2"), [(0, 0.51163, 0.39024), (1, 0.52941, 0.36364)]
)
def test_rouge_with_stemming_matches_official_rouge155(
    line: int, rouge1: float, rouge2: float
) -> None:
    scores = rouge_scores(ROUGE155_PREDICTIONS[line], ROUGE155_TARGETS[line])
    assert scores is not None
    assert scores["rouge1"] == pytest.approx(rouge1, abs=5e-6)
    assert scores["rouge2"] == pytest.approx(rouge2, abs=5e-6)


def test_bleu_uses_the_effective_order_with_the_brevity_penalty() -> None:
    # sacreBLEU's test_effective_order: "test" against "a test" has only a unigram to count
    # (precision 1), so the score is the brevity penalty exp(1 - 2/1) = 0.36788.
    assert bleu_score("test", ["a test"]) == pytest.approx(0.3678794411714425, abs=1e-9)
    assert bleu_score("a test", ["a test"]) == pytest.approx(1.0)
