"""Each filter of generated replies on its own, then the order they are applied in."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.generate.documents import Chunk
from rag_evaluator.generate.filters import (
    ANSWERABLE,
    EMPTY,
    FAILED,
    MAX_ANSWER_CHARACTERS,
    MAX_QUESTION_CHARACTERS,
    NEAR_DUPLICATE,
    NOT_GROUNDED,
    QUOTES_CHUNK,
    TOO_LONG,
    Rejection,
    check_reply,
    is_near_duplicate,
    locate,
)
from rag_evaluator.generate.prompts import NO_INFORMATION_ANSWER, GeneratedPair
from rag_evaluator.generate.sampling import (
    COMPARISON,
    FACTUAL,
    MULTI_HOP,
    UNANSWERABLE,
    QuestionSlot,
)
from rag_evaluator.generate.selection import extra_allowance, judge_replies, replacement_types
from rag_evaluator.generate.task import GenerationItem, GenerationResult

CHUNK = (
    "The TideGauge T4 carries a three-year warranty covering parts and labour.\n"
    "The warranty does not cover damage caused by opening the pressure housing."
)
OTHER = "Calibration of a TideGauge T4 is due every twelve months in the Bergen laboratory."
SUPPORT = "The TideGauge T4 carries a three-year warranty covering parts and labour."


def _pair(
    question: str = "How long is the warranty on the T4?",
    answer: str = "Three years, parts and labour.",
    facts: tuple[str, ...] = ("three years",),
    sentences: tuple[str, ...] = (SUPPORT,),
) -> GeneratedPair:
    return GeneratedPair(question, answer, facts, sentences)


def _reason(result: object) -> str | None:
    return result.reason if isinstance(result, Rejection) else None


# -- locate: whitespace-normalised verbatim matching -----------------------------------------


def test_locate_finds_a_sentence_whose_whitespace_differs() -> None:
    text = "Intro.  The warranty\n   does not cover\tdamage. End."
    start, end = locate("The warranty does not  cover damage.", text)  # type: ignore[misc]
    assert text[start:end] == "The warranty\n   does not cover\tdamage."


def test_locate_refuses_a_paraphrase_and_a_blank() -> None:
    assert locate("The warranty excludes damage.", CHUNK) is None
    assert locate("   ", CHUNK) is None


@given(
    words=st.lists(st.text(alphabet="abcxyz", min_size=1, max_size=5), min_size=1, max_size=8),
    gaps=st.lists(st.sampled_from([" ", "  ", "\n", "\t ", "\r\n"]), min_size=8, max_size=8),
    before=st.text(alphabet="ab .\n", max_size=20),
)
def test_locate_maps_back_to_the_original_characters(
    words: list[str], gaps: list[str], before: str
) -> None:
    spaced = "".join(word + gap for word, gap in zip(words, gaps, strict=False)).rstrip()
    text = before + " " + spaced + " tail"
    span = locate(" ".join(words), text)
    assert span is not None
    start, end = span
    assert " ".join(text[start:end].split()) == " ".join(words)


# -- one filter at a time --------------------------------------------------------------------


def test_a_grounded_reply_passes_with_where_its_support_is() -> None:
    located = check_reply(_pair(), FACTUAL, [CHUNK])
    assert located == [(0, 0, len(SUPPORT))]


def test_empty_question_or_answer() -> None:
    assert _reason(check_reply(_pair(question="  "), FACTUAL, [CHUNK])) == EMPTY
    assert _reason(check_reply(_pair(answer=""), FACTUAL, [CHUNK])) == EMPTY


def test_over_long_question_or_answer() -> None:
    long_question = "Why " + "x" * MAX_QUESTION_CHARACTERS + "?"
    long_answer = "y" * (MAX_ANSWER_CHARACTERS + 1)
    assert _reason(check_reply(_pair(question=long_question), FACTUAL, [CHUNK])) == TOO_LONG
    assert _reason(check_reply(_pair(answer=long_answer), FACTUAL, [CHUNK])) == TOO_LONG
    at_limit = "z" * MAX_ANSWER_CHARACTERS
    assert _reason(check_reply(_pair(answer=at_limit), FACTUAL, [CHUNK])) is None


def test_not_grounded_when_the_support_is_not_in_the_chunk() -> None:
    paraphrase = _pair(sentences=("The T4 has a warranty of three years.",))
    assert _reason(check_reply(paraphrase, FACTUAL, [CHUNK])) == NOT_GROUNDED


def test_not_grounded_without_support_or_with_a_fragment_of_one_word() -> None:
    assert _reason(check_reply(_pair(sentences=()), FACTUAL, [CHUNK])) == NOT_GROUNDED
    assert _reason(check_reply(_pair(sentences=("  ",)), FACTUAL, [CHUNK])) == NOT_GROUNDED
    assert _reason(check_reply(_pair(sentences=("warranty",)), FACTUAL, [CHUNK])) == NOT_GROUNDED


def test_a_multi_hop_reply_must_be_supported_by_each_of_its_chunks() -> None:
    one_sided = _pair(sentences=(SUPPORT,))
    assert _reason(check_reply(one_sided, MULTI_HOP, [CHUNK, OTHER])) == NOT_GROUNDED
    both = _pair(sentences=(SUPPORT, OTHER))
    assert check_reply(both, MULTI_HOP, [CHUNK, OTHER]) == [
        (0, 0, len(SUPPORT)),
        (1, 0, len(OTHER)),
    ]


def test_an_unanswerable_question_citing_the_chunk_is_dropped() -> None:
    cited = _pair(answer=NO_INFORMATION_ANSWER, sentences=(SUPPORT,))
    assert _reason(check_reply(cited, UNANSWERABLE, [CHUNK])) == ANSWERABLE
    clean = _pair(answer=NO_INFORMATION_ANSWER, sentences=())
    assert check_reply(clean, UNANSWERABLE, [CHUNK]) == []


def test_a_question_quoting_ten_words_of_the_chunk_in_a_row() -> None:
    quoting = _pair(
        question="Is it true that the TideGauge T4 carries a three-year warranty covering parts?"
    )
    assert _reason(check_reply(quoting, FACTUAL, [CHUNK])) == QUOTES_CHUNK
    nine_words = _pair(question="Does the TideGauge T4 carry a three-year warranty covering parts?")
    assert _reason(check_reply(nine_words, FACTUAL, [CHUNK])) is None


def test_near_duplicates_by_token_sort_ratio() -> None:
    kept = ["How long is the warranty on the TideGauge T4?"]
    assert is_near_duplicate("how long is the warranty on the TideGauge T4", kept)
    assert is_near_duplicate("The warranty on the TideGauge T4 is how long?", kept)
    assert is_near_duplicate("How long is the TideGauge T4 warranty?!", kept)
    assert not is_near_duplicate("What does the TideGauge T4 warranty exclude?", kept)
    assert not is_near_duplicate(
        "What is the hotel cap in Bergen?", ["What is the hotel cap in Oslo?"]
    )
    assert not is_near_duplicate("anything", [])


# -- all filters in question order -----------------------------------------------------------


def _item(number: int, question_type: str = FACTUAL, texts: tuple[str, ...] = (CHUNK,)):
    chunks = tuple(
        Chunk(index, f"doc{index}.md", 0, len(text), text) for index, text in enumerate(texts)
    )
    return GenerationItem(QuestionSlot(number, question_type, tuple(range(len(texts)))), chunks)


def test_judging_replies_keeps_provenance_and_counts_each_reason() -> None:
    entries = [
        (_item(1), GenerationResult(pair=_pair())),
        (_item(2), GenerationResult(error="API overloaded (529); gave up", failure="transient")),
        (_item(3), GenerationResult(pair=_pair(question="How long is the T4 warranty?!"))),
        (_item(4), GenerationResult(pair=_pair(question="What is excluded?", sentences=("no",)))),
        (
            _item(5, UNANSWERABLE),
            GenerationResult(pair=_pair(question="Is the warranty valid on Mars?", sentences=())),
        ),
    ]
    outcomes = judge_replies(entries, "claude-haiku-5-5")
    reasons = [outcome.rejection.reason if outcome.rejection else "kept" for outcome in outcomes]
    assert reasons == ["kept", FAILED, NEAR_DUPLICATE, NOT_GROUNDED, "kept"]
    first = outcomes[0].pair
    assert first is not None
    assert first.relevant_contexts == (CHUNK,)
    assert first.supporting_sentences == (SUPPORT,)
    assert [(span.file, span.start, span.end) for span in first.spans] == [
        ("doc0.md", 0, len(CHUNK))
    ]
    assert first.source == "generated by claude-haiku-5-5"
    negative = outcomes[4].pair
    assert negative is not None
    assert negative.ground_truth == NO_INFORMATION_ANSWER
    assert negative.relevant_contexts == () and negative.spans == ()


def test_a_dropped_question_does_not_make_a_later_one_a_duplicate() -> None:
    question = "How long is the warranty on the T4?"
    entries = [
        (_item(1), GenerationResult(pair=_pair(question=question, sentences=("nope nope",)))),
        (_item(2), GenerationResult(pair=_pair(question=question))),
    ]
    outcomes = judge_replies(entries, "m")
    assert outcomes[0].rejection is not None
    assert outcomes[1].pair is not None


def test_the_next_round_replaces_dropped_questions_by_type_within_the_allowance() -> None:
    entries = [
        (_item(1), GenerationResult(pair=_pair())),
        (_item(2, COMPARISON), GenerationResult(error="bad", failure="question")),
        (_item(3, MULTI_HOP), GenerationResult(error="bad", failure="question")),
    ]
    outcomes = judge_replies(entries, "m")
    assert replacement_types(outcomes, count=3, asked=3) == [COMPARISON, MULTI_HOP]
    assert extra_allowance(3) == 2
    # Past the allowance (3 + 2 asked), nothing more is asked.
    assert replacement_types(outcomes, count=3, asked=5) == []
    assert replacement_types(outcomes, count=3, asked=4) == [COMPARISON]
    assert replacement_types(outcomes, count=1, asked=3) == []
