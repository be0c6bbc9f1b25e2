"""Long contexts in passages: the cutting rule, and the metrics that read a context's best
passage (issue 8 item 2)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.metrics import (
    MetricOptions,
    answer_hallucination,
    compute_offline_metrics,
    evaluate_all,
)
from rag_evaluator.offline.embeddings import TextEmbedder, load_text_embedder
from rag_evaluator.offline.passages import pack, sentence_spans, split_passages


def word_count(texts: Sequence[str]) -> list[int]:
    """A stand-in tokenizer: one word piece per word."""
    return [len(text.split()) for text in texts]


# --- the cutting rule, with one word piece per word ---


def test_a_text_that_fits_is_its_own_only_passage() -> None:
    text = "One two three. Four five."
    assert split_passages(text, 5, word_count) == [text]


def test_passages_fit_the_budget_end_on_sentences_and_overlap() -> None:
    sentences = [f"Sentence {index} has five words." for index in range(1, 9)]  # 5 words each
    text = " ".join(sentences)
    passages = split_passages(text, 12, word_count)
    # 12 words hold two sentences; a quarter of 12 (3 words) cannot hold a 5-word sentence,
    # so there is no room for overlap at this budget.
    assert passages == [" ".join(sentences[i : i + 2]) for i in range(0, 8, 2)]
    wider = split_passages(text, 20, word_count)
    assert all(len(passage.split()) <= 20 for passage in wider)
    # A quarter of 20 is 5 words: each passage after the first repeats one sentence.
    assert wider[0] == " ".join(sentences[0:4])
    assert wider[1].startswith(sentences[3]) and wider[1].endswith(sentences[6])
    assert wider[-1].endswith(sentences[-1])


def test_a_sentence_longer_than_the_budget_is_cut_between_words() -> None:
    long_sentence = " ".join(f"w{index}" for index in range(30)) + "."
    passages = split_passages(f"Short start. {long_sentence}", 10, word_count)
    assert all(len(passage.split()) <= 10 for passage in passages)
    words_seen = [word for passage in passages for word in passage.split()]
    assert set(words_seen) == set(f"Short start. {long_sentence}".split())


def test_a_word_longer_than_the_budget_is_cut_between_characters() -> None:
    def characters(texts: Sequence[str]) -> list[int]:
        return [len(text) for text in texts]

    passages = split_passages("x" * 25, 10, characters)
    assert passages == ["x" * 10, "x" * 10, "x" * 5]


def test_cjk_full_stops_end_sentences() -> None:
    spans = sentence_spans("東京は日本の首都です。大阪は大きな都市です。")
    assert len(spans) == 2


def test_pack_always_moves_forward_and_puts_an_over_long_unit_alone() -> None:
    assert pack([3, 50, 3, 3], budget=10, overlap=5) == [(0, 1), (1, 2), (2, 4)]


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=40),
    budget=st.integers(min_value=12, max_value=60),
)
def test_packing_covers_every_unit_in_order_within_the_budget(
    lengths: list[int], budget: int
) -> None:
    ranges = pack(lengths, budget, budget // 4)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(lengths)
    for (first, end), (next_first, next_end) in itertools.pairwise(ranges):
        assert first < next_first <= end < next_end  # overlap only backwards, always progress
    for first, end in ranges:
        assert sum(lengths[first:end]) <= budget


_SENTENCE_LENGTHS = st.lists(st.integers(min_value=1, max_value=15), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(
    sentence_lengths=_SENTENCE_LENGTHS,
    separator=st.sampled_from([" ", "\n", "  \n"]),
    budget=st.integers(min_value=3, max_value=40),
)
def test_passages_are_slices_of_the_text_within_the_budget_covering_it_in_order(
    sentence_lengths: list[int], separator: str, budget: int
) -> None:
    # Every word is unique (w0, w1, ...), so a passage's place in the text is unambiguous.
    counter = iter(range(10_000))
    sentences = [
        " ".join(f"w{next(counter)}" for _ in range(length)) + "." for length in sentence_lengths
    ]
    text = separator.join(sentences)
    words = text.split()
    passages = split_passages(text, budget, word_count)
    spans = []
    for passage in passages:
        assert passage in text
        assert len(passage.split()) <= budget
        first = words.index(passage.split()[0])
        end = first + len(passage.split())
        assert words[first:end] == passage.split()
        spans.append((first, end))
    assert spans[0][0] == 0 and spans[-1][1] == len(words)
    for (first, end), (next_first, next_end) in itertools.pairwise(spans):
        assert first < next_first <= end < next_end  # no gap, always forward


# --- on the real model: a supporting sentence past word 400 ---

FILLER = [
    "The recipe calls for two cups of flour, a pinch of salt and warm water.",
    "Heavy rain is expected across the northern valleys later this week.",
    "The home team scored twice in the final minutes to win the cup.",
    "Copper prices rose on strong demand from electronics manufacturers.",
    "Tomato plants need full sun and regular watering during the summer.",
    "The orchestra rehearsed the symphony for three weeks before the premiere.",
    "Most smartphones now charge to eighty percent in under half an hour.",
    "The museum extended its opening hours for the winter holidays.",
    "Migrating geese fly in a V formation to save energy on long journeys.",
    "The city council approved a new budget for road repairs and bike lanes.",
    "A balanced diet includes vegetables, whole grains and lean protein.",
    "The novel follows three sisters who inherit a vineyard in the hills.",
    "Volcanic soil is rich in minerals and good for growing coffee.",
    "The startup raised funding to expand its delivery service to new towns.",
    "Regular stretching can reduce the risk of muscle injuries in runners.",
    "The bridge was closed overnight while engineers inspected its cables.",
    "Honeybees communicate the location of flowers through a waggle dance.",
    "The airline added direct flights between the two capitals this spring.",
    "Chess players often study endgames to improve their overall strategy.",
    "The library offers free language classes for adults on weekday evenings.",
    "Glaciers in the region have retreated steadily over the past century.",
    "The bakery sells out of sourdough bread before noon most Saturdays.",
    "Solar panels on the school roof now cover most of its electricity use.",
    "The film festival screened more than two hundred short films this year.",
    "Octopuses can change the colour and texture of their skin in seconds.",
    "The marathon route passes the harbour, the old town and the park.",
    "Farmers rotate crops to keep the soil healthy and reduce pests.",
    "The theatre company is touring a new production of a classic comedy.",
    "Wind turbines along the coast supply power to thousands of homes.",
    "The hospital opened a new wing dedicated to children's care.",
    "A good night's sleep improves memory, mood and concentration.",
    "The river festival ends each year with fireworks over the water.",
    "Ancient traders carried silk and spices along desert caravan routes.",
    "The zoo welcomed twin panda cubs after a long breeding programme.",
    "Night trains are returning to several routes across the continent.",
    "The village well was restored by volunteers over two summers.",
]
EIFFEL = (
    "The Eiffel Tower was completed in 1889 as the entrance arch to the World's Fair in Paris. "
    "Gustave Eiffel's company designed and built the wrought-iron lattice tower on the Champ "
    "de Mars."
)
FILLER_TEXT = " ".join(FILLER)
LONG_CONTEXT = f"{FILLER_TEXT} {EIFFEL}"
QUESTION = "When was the Eiffel Tower completed?"
ANSWER = "The Eiffel Tower was completed in 1889."


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return load_text_embedder(None)


@pytest.mark.needs_extra("semantic")
def test_the_long_context_is_longer_than_the_model_reads(embedder: TextEmbedder) -> None:
    assert len(FILLER_TEXT.split()) > 400  # the supporting sentence starts past word 400
    assert embedder.passage_budget == 254  # all-MiniLM-L6-v2: 256 less [CLS] and [SEP]
    # The model reads none of the Eiffel sentences when it reads the context whole.
    assert embedder.count_word_pieces([FILLER_TEXT])[0] > embedder.passage_budget
    passages = embedder.passages(LONG_CONTEXT)
    assert len(passages) >= 3
    assert max(embedder.count_word_pieces(passages)) <= embedder.passage_budget
    assert EIFFEL in passages[-1]


def _best_passage_cosine(embedder: TextEmbedder, text: str, context: str) -> float:
    vectors = embedder.encode([text, *embedder.passages(context)])
    return float((vectors[1:] @ vectors[0]).max())


@pytest.mark.needs_extra("semantic")
def test_a_supporting_sentence_past_word_400_counts_as_support(embedder: TextEmbedder) -> None:
    items = [
        EvaluationItem(
            1, QUESTION, ANSWER, ANSWER, contexts=[LONG_CONTEXT], relevant_contexts=[EIFFEL]
        )
    ]
    result = compute_offline_metrics(
        items,
        ["retrieval", "semantic"],
        MetricOptions(match="similarity", similarity_threshold=0.7),
    )
    scores = result.scores[1]
    # Read whole, the context is its first 254 word pieces (all filler): cosine near 0.
    truncated = embedder.encode([ANSWER, LONG_CONTEXT])
    assert float(truncated[0] @ truncated[1]) < 0.1
    assert scores["hallucination"] == 0.0
    best = _best_passage_cosine(embedder, QUESTION, LONG_CONTEXT)
    assert best > 0.5
    assert scores["context_relevance"] == pytest.approx(best, abs=1e-5)
    assert scores["context_sufficiency"] == 1.0
    # --match similarity: the golden chunk is found in the long chunk's last passage.
    assert scores["recall_at_k"] == 1.0
    assert scores["mrr"] == 1.0


@pytest.mark.needs_extra("semantic")
def test_the_library_reads_long_contexts_in_passages_too(embedder: TextEmbedder) -> None:
    passes_before = embedder.passes
    scores = evaluate_all(QUESTION, ANSWER, ANSWER, [LONG_CONTEXT])
    assert embedder.passes - passes_before == 1  # passages go into the same single pass
    assert scores["answer_hallucination"] == 0.0
    assert scores["context_sufficiency"] == 1.0
    assert answer_hallucination(ANSWER, [LONG_CONTEXT]) == 0.0
