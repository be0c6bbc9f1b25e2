"""Semantic metrics on the real bundled all-MiniLM-L6-v2, loaded once, offline."""

from __future__ import annotations

import pytest

from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.metrics import (
    MetricOptions,
    answer_hallucination,
    answer_relevance,
    compute_offline_metrics,
    context_relevance,
    evaluate_all,
    hallucination,
    semantic_similarity,
    split_sentences,
)
from rag_evaluator.offline.embeddings import TextEmbedder, load_bert_scorer, load_text_embedder

pytestmark = pytest.mark.needs_extra("semantic")

CAT = "The cat sat on the mat."
CAT_PARAPHRASE = "A cat was sitting on the rug."
MARKETS = "Stock markets fell sharply after the interest rate decision."
EIFFEL_CONTEXT = (
    "The Eiffel Tower was completed in 1889 for the World's Fair. "
    "It stands on the Champ de Mars in Paris."
)


@pytest.fixture(scope="session")
def embedder() -> TextEmbedder:
    return load_text_embedder(None)


def vector(embedder: TextEmbedder, text: str) -> list[float]:
    return [float(value) for value in embedder.encode([text])[0]]


def test_identical_texts_have_similarity_one(embedder: TextEmbedder) -> None:
    assert semantic_similarity(vector(embedder, CAT), vector(embedder, CAT)) == pytest.approx(
        1.0, abs=1e-5
    )


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(embedder: TextEmbedder) -> None:
    cat = vector(embedder, CAT)
    paraphrase = semantic_similarity(cat, vector(embedder, CAT_PARAPHRASE))
    unrelated = semantic_similarity(cat, vector(embedder, MARKETS))
    assert paraphrase > 0.6
    assert unrelated < 0.3
    assert paraphrase > unrelated


def test_answer_relevance_prefers_an_answer_about_the_question(embedder: TextEmbedder) -> None:
    question = vector(embedder, "When was the Eiffel Tower completed?")
    on_topic = answer_relevance(
        question, vector(embedder, "The Eiffel Tower was finished in 1889.")
    )
    off_topic = answer_relevance(question, vector(embedder, MARKETS))
    assert on_topic > off_topic


def test_an_answer_copied_from_a_context_does_not_hallucinate(embedder: TextEmbedder) -> None:
    contexts = [vector(embedder, EIFFEL_CONTEXT), vector(embedder, MARKETS)]
    copied = [vector(embedder, sentence) for sentence in split_sentences(EIFFEL_CONTEXT)]
    assert hallucination(copied, contexts) == 0.0
    invented = [vector(embedder, "Penguins migrate across the Sahara every winter.")]
    assert hallucination(invented, contexts) == 1.0


def test_context_relevance_is_higher_for_contexts_about_the_question(
    embedder: TextEmbedder,
) -> None:
    question = vector(embedder, "Where is the Eiffel Tower?")
    relevant = context_relevance(question, [vector(embedder, EIFFEL_CONTEXT)])
    irrelevant = context_relevance(question, [vector(embedder, MARKETS)])
    assert relevant is not None and irrelevant is not None
    assert relevant > irrelevant


def test_embedding_a_run_keeps_each_distinct_text_once(embedder: TextEmbedder) -> None:
    table = embedder.embed_all([CAT, MARKETS, CAT, CAT_PARAPHRASE, MARKETS])
    assert list(table.index) == [CAT, MARKETS, CAT_PARAPHRASE]
    assert table.vectors.shape[0] == 3
    assert table.cosine(CAT, CAT) == pytest.approx(1.0, abs=1e-5)


def test_bert_score_of_identical_text_is_one_and_paraphrase_beats_unrelated() -> None:
    scorer = load_bert_scorer(None)
    identical, paraphrase, unrelated = scorer.score([CAT, CAT_PARAPHRASE, MARKETS], [CAT, CAT, CAT])
    assert identical[2] == pytest.approx(1.0, abs=1e-4)
    assert paraphrase[2] > unrelated[2]


def _items() -> list[EvaluationItem]:
    return [
        EvaluationItem(
            1,
            "When was the Eiffel Tower completed?",
            "It was completed in 1889.",
            "The Eiffel Tower was completed in 1889 for the World's Fair.",
            contexts=[EIFFEL_CONTEXT, MARKETS],
            relevant_contexts=["The Eiffel Tower was finished in 1889, for the World's Fair."],
        ),
        EvaluationItem(2, "What did the cat do?", CAT, CAT_PARAPHRASE),
        EvaluationItem(3, "Any news?", "", "", contexts=[]),
    ]


def test_the_semantic_family_scores_every_row_from_one_pass() -> None:
    result = compute_offline_metrics(_items(), ["semantic"], MetricOptions())
    assert result.columns == [
        "semantic_similarity",
        "answer_relevance",
        "answer_correctness",
        "context_relevance",
        "context_sufficiency",
        "hallucination",
        "bert_score_precision",
        "bert_score_recall",
        "bert_score_f1",
    ]
    first = result.scores[1]
    for value in first.values():
        assert value is not None and 0.0 <= value <= 1.0
    # Both answer sentences come from the first context: nothing is unsupported.
    assert first["hallucination"] == 0.0
    assert first["context_sufficiency"] == 0.5  # the Eiffel context yes, the markets one no
    # No Contexts column for question 2: its context metrics are empty, the rest are not.
    second = result.scores[2]
    assert second["context_relevance"] is None and second["hallucination"] is None
    assert second["semantic_similarity"] is not None and second["semantic_similarity"] > 0.6
    # Question 3: empty ground truth and answer, no contexts retrieved.
    third = result.scores[3]
    assert third["semantic_similarity"] is None and third["bert_score_f1"] is None
    assert third["answer_relevance"] == 0.0
    warned = {warning.split(":", 1)[0] for warning in result.warnings}
    assert {"context_relevance", "hallucination", "semantic_similarity"} <= warned


def test_similarity_matching_finds_a_reworded_golden_chunk() -> None:
    items = [
        EvaluationItem(
            1,
            "When was the Eiffel Tower completed?",
            "1889",
            "1889",
            contexts=["The Eiffel Tower was completed in 1889.", MARKETS],
            relevant_contexts=["The Eiffel Tower was finished in 1889."],
        )
    ]
    exact = compute_offline_metrics(items, ["retrieval"], MetricOptions(k=2))
    similar = compute_offline_metrics(
        items, ["retrieval"], MetricOptions(k=2, match="similarity", similarity_threshold=0.8)
    )
    assert exact.scores[1]["recall_at_k"] == 0.0
    assert similar.scores[1]["recall_at_k"] == 1.0
    assert similar.scores[1]["precision_at_k"] == 0.5
    assert similar.scores[1]["mrr"] == 1.0


def test_a_model_that_is_not_on_disk_fails_with_the_fix() -> None:
    with pytest.raises(UsageError, match="Pass a local model folder"):
        load_text_embedder("no-such-owner/no-such-model-rag-eval")


def test_a_run_embeds_every_distinct_text_once_in_one_pass(
    embedder: TextEmbedder,
) -> None:
    items = [
        EvaluationItem(
            question_number=1,
            question="When was the Eiffel Tower completed?",
            ground_truth="The Eiffel Tower was completed in 1889.",
            rag_answer="It was completed in 1889. It stands in Paris.",
            contexts=[EIFFEL_CONTEXT, MARKETS],
            relevant_contexts=[EIFFEL_CONTEXT],
        ),
        EvaluationItem(
            question_number=2,
            question="What did the cat do?",
            ground_truth=CAT,
            rag_answer=CAT_PARAPHRASE,
            contexts=[MARKETS, CAT],
            relevant_contexts=[CAT],
        ),
    ]
    # Distinct texts: 2 questions, 2 answers, 2 ground truths, 2 answer sentences of the
    # first answer (the second answer is one sentence, itself), and EIFFEL_CONTEXT and
    # MARKETS; CAT is both a ground truth and a context, and the golden chunks are contexts
    # too. 10 texts, although the rows hold 17 between them.
    passes_before, batches_before = embedder.passes, embedder.batches
    texts_before = embedder.texts_encoded
    progress: list[str] = []
    compute_offline_metrics(
        items, ["retrieval", "semantic"], MetricOptions(match="similarity"), progress.append
    )
    assert embedder.passes - passes_before == 1
    assert embedder.batches - batches_before == 1  # 10 texts fit one batch of 64
    assert embedder.texts_encoded - texts_before == 10
    assert [line for line in progress if line.startswith("Embedding")] == [
        "Embedding 10 distinct text(s), a long one as several passages"
    ]


def test_the_bundled_model_answers_to_its_own_name_offline(embedder: TextEmbedder) -> None:
    # Seed 002 passes model_name="all-MiniLM-L6-v2"; with no hub that name must load the
    # bundled copy (and the same loaded model), not fail on a download.
    assert load_text_embedder("all-MiniLM-L6-v2") is embedder
    assert load_text_embedder("sentence-transformers/all-MiniLM-L6-v2") is embedder
    assert load_bert_scorer("all-MiniLM-L6-v2") is load_bert_scorer(None)


def test_evaluate_all_has_seed_002s_signature_and_embeds_in_one_pass(
    embedder: TextEmbedder,
) -> None:
    question = "When was the Eiffel Tower completed?"
    answer = "The Eiffel Tower was completed in 1889 for the World's Fair."
    passes_before = embedder.passes
    scores = evaluate_all(
        question=question,
        answer=answer,
        reference="It was finished in 1889.",
        contexts=[EIFFEL_CONTEXT, MARKETS],
        model_name="all-MiniLM-L6-v2",
        thresholds=(0.5, 0.4),
    )
    assert embedder.passes - passes_before == 1
    assert list(scores) == [
        "context_relevance",
        "context_sufficiency",
        "answer_relevance",
        "answer_correctness",
        "answer_hallucination",
    ]
    assert scores["context_sufficiency"] == 0.5  # the Eiffel context yes, the markets one no
    assert scores["answer_hallucination"] == 0.0  # the answer is a sentence of a context
    expected_relevance = answer_relevance(vector(embedder, question), vector(embedder, answer))
    assert scores["answer_relevance"] == pytest.approx(expected_relevance, abs=1e-5)
    expected_context = context_relevance(
        vector(embedder, question), [vector(embedder, EIFFEL_CONTEXT), vector(embedder, MARKETS)]
    )
    assert scores["context_relevance"] == pytest.approx(expected_context, abs=1e-5)
    # The answer is copied from the context: supported by containment at any threshold.
    strict = (0.5, 0.999)
    assert (
        evaluate_all(question, answer, "", [EIFFEL_CONTEXT], None, strict)["answer_hallucination"]
        == 0.0
    )
    # A reworded answer is judged by its cosine: a stricter threshold flags it.
    reworded = "The tower in Paris was finished in 1889."
    assert (
        evaluate_all(question, reworded, "", [EIFFEL_CONTEXT], None, strict)["answer_hallucination"]
        == 1.0
    )


def test_answer_hallucination_has_seed_002s_signature() -> None:
    invented = "Penguins migrate across the Sahara every winter."
    assert answer_hallucination(invented, [EIFFEL_CONTEXT], "all-MiniLM-L6-v2", 0.4) == 1.0
    copied = " ".join(split_sentences(EIFFEL_CONTEXT))
    assert answer_hallucination(copied, [EIFFEL_CONTEXT, MARKETS], "all-MiniLM-L6-v2") == 0.0
    assert answer_hallucination(invented, []) == 1.0  # no context supports anything
    assert answer_hallucination("", [EIFFEL_CONTEXT]) is None  # no sentence to judge


def test_extractive_answers_copied_from_their_context_do_not_hallucinate() -> None:
    """Short answers copied from a long context (names, years) have a low cosine with it;
    containment, not the embedding, says they are supported."""
    context = (
        "The 2010 Winter Olympics were held in Vancouver. In figure skating, the judges "
        "awarded the gold medal to Yuzuru Hanyu after a record free skate, while the "
        "audience cheered for the local skater Wanda Kowalski, who finished fourth."
    )
    answers = ["Wanda", "Yuzuru Hanyu.", "2010", "In Vancouver, in 2010."]
    items = [
        EvaluationItem(number, "Who?", answer, answer, contexts=[context])
        for number, answer in enumerate(answers, start=1)
    ]
    items.append(EvaluationItem(9, "Who?", "Penguins fly south.", "x", contexts=[context]))
    scores = compute_offline_metrics(items, ["semantic"], MetricOptions()).scores
    assert [scores[number]["hallucination"] for number in range(1, 5)] == [0.0] * 4
    assert scores[9]["hallucination"] == 1.0  # not in the context, and far from it
    assert answer_hallucination("Yuzuru Hanyu", [MARKETS, context]) == 0.0


def test_a_blank_question_is_named_as_the_reason_for_empty_context_metrics() -> None:
    items = [
        EvaluationItem(1, "", "Paris is big.", "Paris.", contexts=["Paris is a city."]),
        EvaluationItem(2, "Where?", "Lyon.", "Lyon.", contexts=[]),
    ]
    result = compute_offline_metrics(items, ["semantic"], MetricOptions())
    warning = next(w for w in result.warnings if w.startswith("context_relevance"))
    assert warning == (
        "context_relevance: left empty for 2 of 2 question(s): the question is empty "
        "(question 1); no context was retrieved (question 2)"
    )


def test_offline_families_report_progress_after_each_batch() -> None:
    from rag_evaluator.offline.embeddings import BERTSCORE_BATCH_SIZE, ENCODE_BATCH_SIZE
    from rag_evaluator.offline.families import MetricFamilies, compute_offline

    items = [
        EvaluationItem(
            number,
            f"What is rule {number}?",
            f"Rule {number} sets the rate.",
            f"Rule {number} covers the rate.",
            contexts=[f"Rule {number}: the rate for territory {number}."],
        )
        for number in range(1, 41)
    ]
    calls: list[tuple[str, int, int]] = []
    compute_offline(
        MetricFamilies(judge=False, offline=("semantic",)),
        items,
        MetricOptions(),
        lambda _message: None,
        on_progress=lambda label, done, total: calls.append((label, done, total)),
    )
    # 40 questions + 40 answers + 40 ground truths + 40 contexts (each answer is one sentence,
    # itself): 160 texts to embed; 80 answers and ground truths for BERTScore.
    expected = {"Embedding": (160, ENCODE_BATCH_SIZE), "BERTScore": (80, BERTSCORE_BATCH_SIZE)}
    assert [label for label, _, _ in calls] == sorted(
        (label for label, _, _ in calls), key=["Embedding", "BERTScore"].index
    )
    for label, (total, batch_size) in expected.items():
        done = [count for name, count, _ in calls if name == label]
        assert {size for name, _, size in calls if name == label} == {total}
        assert len(done) == -(-total // batch_size)  # after each batch
        assert done == sorted(set(done)) and done[-1] == total


def _sharing_items(count: int) -> list[EvaluationItem]:
    """Questions that all retrieve the same two contexts, as questions over one corpus do."""
    return [
        EvaluationItem(
            question_number=number,
            question=f"Question {number}: when was the Eiffel Tower completed?",
            ground_truth="The Eiffel Tower was completed in 1889.",
            rag_answer=f"It was completed in 1889 (answer {number}).",
            contexts=[EIFFEL_CONTEXT, MARKETS],
            relevant_contexts=[EIFFEL_CONTEXT],
        )
        for number in range(1, count + 1)
    ]


def test_a_context_shared_across_chunks_is_embedded_once(embedder: TextEmbedder) -> None:
    from rag_evaluator.offline.runner import OfflineScoring

    items = _sharing_items(4)
    options = MetricOptions(match="similarity")
    whole = compute_offline_metrics(items, ["retrieval", "semantic"], options).scores
    before = embedder.texts_encoded
    scoring = OfflineScoring(["retrieval", "semantic"], options)
    chunked = {
        number: row
        for chunk in scoring.chunks(items, chunk_rows=1)
        for number, row in chunk.scores.items()
    }
    # Per question: its question and answer (one sentence: itself); the ground truth and
    # the two contexts only with the first question's chunk.
    assert embedder.texts_encoded - before == 2 * 4 + 3
    assert chunked.keys() == whole.keys()
    for number, row in whole.items():
        for column, value in row.items():
            if isinstance(value, float):
                assert chunked[number][column] == pytest.approx(value, abs=1e-6), column
            else:
                assert chunked[number][column] == value, column
