"""Sentence boundaries and containment: what answer_hallucination judges sentence by sentence."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.offline.semantic import (
    CONTAINED_SUPPORT,
    contained_in_contexts,
    hallucination_from_cosines,
    sentence_support,
)
from rag_evaluator.text.sentences import split_sentences
from rag_evaluator.text.unicode_tokens import word_tokens


def test_abbreviations_dates_and_decimals_do_not_end_a_sentence() -> None:
    text = (
        "Dr. Smith saw the patient on Jan. 5 at the clinic. "
        "Bring ID, e.g. a passport or a licence. "
        "The rate rose 2.5 percent to $3.75 per share."
    )
    assert split_sentences(text) == [
        "Dr. Smith saw the patient on Jan. 5 at the clinic.",
        "Bring ID, e.g. a passport or a licence.",
        "The rate rose 2.5 percent to $3.75 per share.",
    ]


def test_line_breaks_end_sentences_and_list_markers_are_removed() -> None:
    text = "Steps:\n1. Open the form\n- Sign it.\n\n* Send it! Then wait?"
    assert split_sentences(text) == [
        "Steps:",
        "Open the form",
        "Sign it.",
        "Send it!",
        "Then wait?",
    ]


def test_cjk_full_stops_end_sentences_without_a_space() -> None:
    assert split_sentences("北京是中国的首都。上海是最大的城市！") == [
        "北京是中国的首都。",
        "上海是最大的城市！",
    ]


def test_pieces_without_a_letter_or_digit_are_dropped() -> None:
    assert split_sentences("...\n---\n") == []
    assert split_sentences("") == []


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_every_sentence_is_text_of_the_input_and_no_word_is_lost(text: str) -> None:
    sentences = split_sentences(text)
    for sentence in sentences:
        assert sentence and sentence == sentence.strip()
        assert sentence in text
    # Words survive the cut (list markers aside, which are not words of the sentence).
    kept = [word for sentence in sentences for word in word_tokens(sentence)]
    assert set(kept) <= set(word_tokens(text))


def test_a_sentence_copied_from_a_context_is_contained_whatever_case_and_punctuation() -> None:
    context = "Yuzuru Hanyu won the gold medal in 2014 and again in 2018, in Pyeongchang."
    for answer in ("Yuzuru Hanyu", "yuzuru hanyu.", "2014", "again in 2018 in Pyeongchang"):
        assert contained_in_contexts(answer, [context]), answer
    for answer in ("Hanyu Yuzuru", "2010", "Yuzu", "gold medals"):
        assert not contained_in_contexts(answer, [context]), answer
    assert not contained_in_contexts("...", [context])  # no words: contained nowhere
    assert not contained_in_contexts("Wanda", [])


def test_contained_sentences_are_supported_whatever_their_cosine() -> None:
    sentences = ["Wanda", "She flew to Mars."]
    support = sentence_support(sentences, ["The winner was Wanda, aged 9."], [0.12, 0.2])
    assert support == (CONTAINED_SUPPORT, 0.2)
    assert hallucination_from_cosines(support) == 0.5
    # Without a context nothing is contained and every sentence stays unsupported.
    assert sentence_support(sentences, [], [None, None]) == (None, None)


def test_containment_works_in_scripts_without_spaces() -> None:
    context = "2008年北京举办了夏季奥运会。"
    assert contained_in_contexts("北京举办了夏季奥运会", [context])
    assert not contained_in_contexts("上海举办了奥运会", [context])
