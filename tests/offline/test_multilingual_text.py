"""ROUGE, BLEU and keywords on text that is not English, scores worked out by hand.

ROUGE-n F1 = 2PR / (P + R) over clipped n-gram matches; BLEU (sacreBLEU's sentence BLEU,
exp smoothing, effective order) = BP * geometric mean of the n-gram precisions, where an
order with no match counts 1 / (2^j * hypothesis n-grams) for its j-th such order and
BP = exp(1 - r/h) when the hypothesis (h tokens) is shorter than the reference (r).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.offline.lexical import extract_keywords, keyword_coverage
from rag_evaluator.offline.overlap import bleu, bleu_tokenizer, rouge_f1

pytestmark = pytest.mark.needs_extra("overlap")


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall)


def test_a_chinese_answer_identical_to_its_reference_scores_one() -> None:
    text = "北京是中国的首都"
    assert rouge_f1(text, text) == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0}
    assert bleu(text, [text]) == pytest.approx(1.0)
    assert keyword_coverage(text, text) == 1.0


def test_a_chinese_answer_is_scored_character_by_character() -> None:
    answer, reference = "北京是首都", "北京是中国的首都"
    scores = rouge_f1(answer, reference)
    # 5 characters, all in the 8 of the reference: P 5/5, R 5/8; LCS 北京是首都 is the same.
    assert scores["rouge1"] == pytest.approx(f1(1, 5 / 8))
    assert scores["rougeL"] == pytest.approx(f1(1, 5 / 8))
    # Bigrams 北京 京是 是首 首都 against 7: 北京 京是 首都 match -> P 3/4, R 3/7.
    assert scores["rouge2"] == pytest.approx(f1(3 / 4, 3 / 7))
    # zh tokenizer, one token per character: p1 5/5, p2 3/4, p3 1/3 (北京是), p4 none of 2
    # -> 1/(2*2); BP exp(1 - 8/5).
    expected = (1 * 3 / 4 * 1 / 3 * 1 / 4) ** 0.25 * math.exp(1 - 8 / 5)
    assert bleu(answer, [reference]) == pytest.approx(expected, abs=1e-4)
    # Keywords of Chinese: neighbouring characters; 北京, 京是, 首都 of 7 are in the answer.
    assert len(extract_keywords(reference).items) == 7
    assert keyword_coverage(answer, reference) == pytest.approx(3 / 7)


def test_a_russian_answer_sharing_only_a_number_is_not_a_match() -> None:
    answer, reference = "Ему 25 лет", "Городу 25 веков"
    # Three words each, only "25" shared: 1/3 (it was 1.0 when only ASCII digits counted).
    assert rouge_f1(answer, reference) == {
        "rouge1": pytest.approx(1 / 3),
        "rouge2": 0.0,
        "rougeL": pytest.approx(1 / 3),
    }
    # intl tokenizer: p1 1/3, p2 none of 2 -> 1/(2*2), p3 none of 1 -> 1/(4*1); same length.
    assert bleu(answer, [reference]) == pytest.approx((1 / 3 * 1 / 4 * 1 / 4) ** (1 / 3), abs=1e-4)


def test_german_words_with_umlauts_and_sharp_s_stay_whole() -> None:
    answer, reference = "Die Größe ist wichtig", "Die Größe ist klein"
    scores = rouge_f1(answer, reference)
    # die, größe, ist shared of 4 and 4 (an ASCII tokenizer cut "Größe" into "gr", "e").
    assert scores["rouge1"] == pytest.approx(0.75)
    assert scores["rouge2"] == pytest.approx(2 / 3)  # die größe, größe ist of 3
    assert scores["rougeL"] == pytest.approx(0.75)
    # 13a (Latin script): p1 3/4, p2 2/3, p3 1/2, p4 none of 1 -> 1/2; same length.
    assert bleu(answer, [reference]) == pytest.approx((3 / 4 * 2 / 3 * 1 / 2 * 1 / 2) ** 0.25)


def test_arabic_words_are_tokens() -> None:
    answer, reference = "القاهرة عاصمة مصر", "القاهرة هي عاصمة مصر"
    scores = rouge_f1(answer, reference)
    # 3 words, all among the reference's 4: P 1, R 3/4; LCS 3.
    assert scores["rouge1"] == pytest.approx(f1(1, 3 / 4))
    assert scores["rougeL"] == pytest.approx(f1(1, 3 / 4))
    # Bigrams: عاصمة مصر is the one shared, of 2 and 3.
    assert scores["rouge2"] == pytest.approx(f1(1 / 2, 1 / 3))
    # intl: p1 3/3, p2 1/2, p3 none of 1 -> 1/2; BP exp(1 - 4/3).
    expected = (1 * 1 / 2 * 1 / 2) ** (1 / 3) * math.exp(1 - 4 / 3)
    assert bleu(answer, [reference]) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    ("texts", "tokenizer"),
    [
        (["The premium is $604.", "It is $604."], "13a"),
        (["Die Größe ist wichtig"], "13a"),
        (["北京是中国的首都", "Beijing"], "zh"),
        (["東京はにほんの首都です"], "char"),
        (["Москва"], "intl"),
        (["القاهرة"], "intl"),
    ],
)
def test_bleu_picks_its_tokenizer_from_the_scripts(texts: list[str], tokenizer: str) -> None:
    assert bleu_tokenizer(texts) == tokenizer


ASCII_WORDS = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)


@settings(max_examples=200, deadline=None)
@given(ASCII_WORDS, ASCII_WORDS)
def test_english_text_scores_as_rouge_score_and_sacrebleu_defaults(
    answer: str, reference: str
) -> None:
    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu import sentence_bleu

    if not reference.strip():
        return
    default = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    expected = default.score(reference, answer)
    scores = rouge_f1(answer, reference)
    for key in ("rouge1", "rouge2", "rougeL"):
        assert scores[key] == pytest.approx(min(1.0, expected[key].fmeasure))
    if answer.strip():
        expected_bleu = min(1.0, sentence_bleu(answer, [reference]).score / 100)
        assert bleu(answer, [reference]) == pytest.approx(expected_bleu)


def test_the_judge_is_told_the_texts_may_be_in_any_language() -> None:
    assert "any language" in DEFAULT_SYSTEM_PROMPT
