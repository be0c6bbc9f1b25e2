"""Retrieval metrics: trec_eval values for P@k, R@k, RR and nDCG, hand-worked hybrid log-rank."""

from __future__ import annotations

import math

import pytest

from rag_evaluator.metrics import (
    average_precision,
    f1_at_k,
    hybrid_log_rank_score,
    log_rank_score,
    mrr,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from rag_evaluator.offline.retrieval import exact_matches, similarity_matches

# A small run scored once with ir-measures 0.4.3 (pytrec_eval-terrier 0.5.11, i.e. trec_eval):
# measures P@5, P@3, R@5, R@3, RR, nDCG@5, nDCG@3 with binary qrels. The documents are
# chunk texts here. The values below are copied from its output, not computed by this code.
RUN = {
    "q1": ["d1", "d2", "d3", "d4", "d5", "d6"],
    "q2": ["d7", "d8", "d3"],
    "q3": ["a", "b", "c", "d"],
    "q4": ["x", "y"],
}
QRELS = {
    "q1": ["d2", "d5", "d9"],
    "q2": ["d7"],
    "q3": ["c", "d", "e", "f", "g", "h"],
    "q4": ["z"],
}
TREC_EVAL = {
    "q1": {
        "P@5": 0.4,
        "P@3": 0.3333333333333333,
        "R@5": 0.6666666666666666,
        "R@3": 0.3333333333333333,
        "RR": 0.5,
        "nDCG@5": 0.4776237035032179,
        "nDCG@3": 0.2960819109658652,
    },
    "q2": {
        "P@5": 0.2,
        "P@3": 0.3333333333333333,
        "R@5": 1.0,
        "R@3": 1.0,
        "RR": 1.0,
        "nDCG@5": 1.0,
        "nDCG@3": 1.0,
    },
    "q3": {
        "P@5": 0.4,
        "P@3": 0.3333333333333333,
        "R@5": 0.3333333333333333,
        "R@3": 0.16666666666666666,
        "RR": 0.3333333333333333,
        "nDCG@5": 0.3156484524795145,
        "nDCG@3": 0.23463936301137822,
    },
    "q4": {"P@5": 0.0, "P@3": 0.0, "R@5": 0.0, "R@3": 0.0, "RR": 0.0, "nDCG@5": 0.0, "nDCG@3": 0.0},
}
# ir-measures' aggregate (mean over the four queries).
TREC_EVAL_MEANS = {"P@5": 0.25, "RR": 0.4583333333333333, "nDCG@5": 0.44831803899568307}


def chunks(doc_ids: list[str]) -> list[str]:
    return [f"Chunk {doc_id}: some retrieved passage." for doc_id in doc_ids]


@pytest.mark.parametrize("query", sorted(RUN))
@pytest.mark.parametrize("k", [3, 5])
def test_precision_recall_and_ndcg_match_trec_eval(query: str, k: int) -> None:
    retrieved, golden = chunks(RUN[query]), chunks(QRELS[query])
    expected = TREC_EVAL[query]
    assert precision_at_k(golden, retrieved_chunks=retrieved, k=k) == pytest.approx(
        expected[f"P@{k}"]
    )
    assert recall_at_k(golden, retrieved_chunks=retrieved, k=k) == pytest.approx(expected[f"R@{k}"])
    assert ndcg_at_k(golden, retrieved_chunks=retrieved, k=k) == pytest.approx(
        expected[f"nDCG@{k}"]
    )


@pytest.mark.parametrize("query", sorted(RUN))
def test_reciprocal_rank_matches_trec_eval(query: str) -> None:
    assert mrr(chunks(QRELS[query]), retrieved_chunks=chunks(RUN[query])) == pytest.approx(
        TREC_EVAL[query]["RR"]
    )


def test_means_over_the_run_match_trec_eval() -> None:
    def mean(values: list[float | None]) -> float:
        present = [value for value in values if value is not None]
        return sum(present) / len(present)

    pairs = [(chunks(RUN[q]), chunks(QRELS[q])) for q in sorted(RUN)]
    assert mean([precision_at_k(g, retrieved_chunks=r, k=5) for r, g in pairs]) == pytest.approx(
        TREC_EVAL_MEANS["P@5"]
    )
    assert mean([mrr(g, retrieved_chunks=r) for r, g in pairs]) == pytest.approx(
        TREC_EVAL_MEANS["RR"]
    )
    assert mean([ndcg_at_k(g, retrieved_chunks=r, k=5) for r, g in pairs]) == pytest.approx(
        TREC_EVAL_MEANS["nDCG@5"]
    )


def test_f1_is_the_harmonic_mean_of_precision_and_recall() -> None:
    # q1 at k=5: P 0.4, R 2/3 -> 2 * 0.4 * 2/3 / (0.4 + 2/3) = 0.5.
    assert f1_at_k(chunks(QRELS["q1"]), retrieved_chunks=chunks(RUN["q1"]), k=5) == pytest.approx(
        0.5
    )


def test_exact_matching_ignores_whitespace_runs_and_counts_a_repeat_once() -> None:
    retrieved = ["alpha  beta", "alpha beta", "gamma"]
    assert precision_at_k(["alpha beta\n"], retrieved_chunks=retrieved, k=2) == pytest.approx(0.5)
    assert exact_matches(retrieved, ["alpha beta"]).retrieved_count == 2


# --- hybrid log-rank, worked by hand ---
# Retrieved [a, b, c, d] (n = 4), golden [b, d, e]: recall over the list 2/3; b at rank 2,
# d at rank 4, e missing (0).
HYBRID_RETRIEVED = ["a", "b", "c", "d"]
HYBRID_GOLDEN = ["b", "d", "e"]


@pytest.mark.parametrize(
    ("gamma", "alpha", "expected"),
    [
        # log_rank(2) = 1 - ln 2 / ln 4 = 0.5; log_rank(4) = 0 -> quality (0.5 + 0 + 0) / 3
        # = 1/6; 0.5 * 2/3 + 0.5 * 1/6 = 5/12.
        (1.0, 0.5, 5 / 12),
        # 0.8 * 2/3 + 0.2 * 1/6 = 0.53333 + 0.03333 = 17/30.
        (1.0, 0.8, 17 / 30),
        # alpha 0: rank quality only; alpha 1: recall only.
        (1.0, 0.0, 1 / 6),
        (1.0, 1.0, 2 / 3),
        # gamma 3: log_rank(2) = 1 - ln 4 / ln 10 = 0.397940 -> quality 0.132647;
        # 0.333333 + 0.066323 = 0.399657.
        (3.0, 0.5, 0.399657),
        # gamma 0.5: log_rank(2) = 1 - ln 1.5 / ln 2.5 = 0.557493 -> quality 0.185831;
        # 0.333333 + 0.092916 = 0.426249.
        (0.5, 0.5, 0.426249),
    ],
)
def test_hybrid_log_rank_hand_worked(gamma: float, alpha: float, expected: float) -> None:
    score = hybrid_log_rank_score(
        HYBRID_GOLDEN, retrieved_chunks=HYBRID_RETRIEVED, gamma=gamma, alpha=alpha
    )
    assert score == pytest.approx(expected, abs=1e-6)


def test_log_rank_score_runs_from_one_at_the_top_to_zero_at_the_bottom() -> None:
    assert log_rank_score(1, 5) == 1.0
    assert log_rank_score(5, 5) == 0.0
    # 1 - ln 3 / ln 5 = 1 - 1.098612 / 1.609438 = 0.317394
    assert log_rank_score(3, 5) == pytest.approx(0.317394, abs=1e-6)


def test_hybrid_log_rank_rewards_golden_chunks_near_the_top() -> None:
    # One golden chunk at rank 1: recall 1, quality 1.
    assert hybrid_log_rank_score(["a"], retrieved_chunks=["a", "b", "c"]) == 1.0
    # Ranks 1 and 2 of n = 3: log_rank(2) = 1 - ln 2 / ln 3 = 0.369070 -> quality 0.684535;
    # 0.5 * 1 + 0.5 * 0.684535 = 0.842268.
    assert hybrid_log_rank_score(["a", "b"], retrieved_chunks=["a", "b", "c"]) == pytest.approx(
        0.842268, abs=1e-6
    )


# --- similarity matching on hand-made vectors ---
# Retrieved vectors against golden vectors: r1 ~ g1 (cos 0.96), r2 unrelated, r3 ~ g2 (0.8).
RETRIEVED_VECTORS = [[1.0, 0.3, 0.0], [0.0, 0.0, 1.0], [0.0, 4.0, 3.0]]
GOLDEN_VECTORS = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


SIMILARITY = {"match": "similarity"}


def test_similarity_matching_uses_the_cosine_threshold() -> None:
    # cos(r1, g1) = 1 / sqrt(1.09) = 0.9578; cos(r3, g2) = 4/5 = 0.8 exactly: matched, as the
    # threshold is inclusive.
    golden, retrieved = GOLDEN_VECTORS, RETRIEVED_VECTORS
    assert precision_at_k(golden, retrieved_chunks=retrieved, k=3, **SIMILARITY) == pytest.approx(
        2 / 3
    )
    assert recall_at_k(golden, retrieved_chunks=retrieved, k=3, **SIMILARITY) == 1.0
    assert recall_at_k(
        golden, retrieved_chunks=retrieved, k=3, match="similarity", threshold=0.9
    ) == pytest.approx(0.5)
    assert f1_at_k(golden, retrieved_chunks=retrieved, k=3, **SIMILARITY) == pytest.approx(0.8)
    # Gains at ranks 1 and 3 over an ideal of ranks 1 and 2.
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at_k(golden, retrieved_chunks=retrieved, k=3, **SIMILARITY) == pytest.approx(
        (1 + 1 / math.log2(4)) / ideal
    )
    # recall 1; ranks 1 and 3 of n = 3: (1 + 0) / 2 -> 0.5 * 1 + 0.5 * 0.5.
    assert hybrid_log_rank_score(golden, retrieved_chunks=retrieved, **SIMILARITY) == (
        pytest.approx(0.75)
    )


def test_similarity_matches_credit_a_golden_chunk_once_in_ndcg() -> None:
    # Two retrieved chunks both match golden chunk 0: P@2 counts both, nDCG only the first.
    ranked = similarity_matches([[0.9], [0.85]], golden_count=1)
    assert ranked.precision_at_k(2) == 1.0
    assert ranked.ndcg_at_k(2) == 1.0


def test_similarity_functions_count_a_repeated_chunk_once_as_exact_matching_does() -> None:
    # Retrieved: r1 (matches g1), r1 again, r2 (unrelated); golden g1 listed twice. The
    # repeat is dropped, as exact matching drops a repeated text: P@2 = 1 of (r1, r2) / 2.
    retrieved = [RETRIEVED_VECTORS[0], list(RETRIEVED_VECTORS[0]), RETRIEVED_VECTORS[1]]
    golden = [GOLDEN_VECTORS[0], GOLDEN_VECTORS[0]]
    assert precision_at_k(golden, retrieved_chunks=retrieved, k=2, **SIMILARITY) == (
        pytest.approx(0.5)
    )
    assert precision_at_k(["r1", "r1"], retrieved_chunks=["r1", "r1", "r2"], k=2) == (
        pytest.approx(0.5)
    )
    # One golden chunk, found.
    assert recall_at_k(golden, retrieved_chunks=retrieved, k=1, **SIMILARITY) == 1.0
    assert recall_at_k(["r1", "r1"], retrieved_chunks=["r1", "r1", "r2"], k=1) == 1.0
    # n = 2 after the repeat is dropped: r1 at rank 1 of 2.
    assert hybrid_log_rank_score(golden, retrieved_chunks=retrieved, **SIMILARITY) == 1.0
    assert mrr(golden, retrieved_chunks=[RETRIEVED_VECTORS[1], *retrieved], **SIMILARITY) == 0.5


def test_a_repeat_is_an_embedding_equal_to_float_noise() -> None:
    # The same text embedded in two batches differs by ~1e-7: still a repeat. A vector at
    # cosine 0.9999 with it is another chunk.
    noisy = [value + 1e-8 for value in RETRIEVED_VECTORS[0]]
    close = [1.0, 0.3, 0.0142]  # cosine 0.99990 with r1
    golden = [GOLDEN_VECTORS[0]]
    first = RETRIEVED_VECTORS[0]
    assert precision_at_k(golden, retrieved_chunks=[first, noisy], k=2, **SIMILARITY) == 0.5
    assert precision_at_k(golden, retrieved_chunks=[first, close], k=2, **SIMILARITY) == 1.0


@pytest.mark.parametrize(
    ("relevant_ranks", "retrieved", "expected"),
    [
        ((1, 3), 4, (1 / 1 + 2 / 3) / 2),  # P@1 = 1, P@3 = 2/3
        ((2,), 3, 1 / 2),
        ((1, 2), 2, 1.0),  # every relevant chunk above every other
        ((), 3, 0.0),  # nothing relevant
        ((), 0, 0.0),  # nothing retrieved
    ],
)
def test_context_precision_is_ragas_rank_weighted_precision_in_every_mode(
    relevant_ranks: tuple[int, ...], retrieved: int, expected: float
) -> None:
    from rag_evaluator.families import scores as judged_scores
    from rag_evaluator.offline.retrieval import overlap_matches

    golden = [f"golden chunk number {rank}" for rank in relevant_ranks]
    chunks_ = [
        golden[relevant_ranks.index(rank)] if rank in relevant_ranks else f"other text {rank}"
        for rank in range(1, retrieved + 1)
    ]
    exact = average_precision(golden or ["absent"], retrieved_chunks=chunks_)
    assert exact == pytest.approx(expected)
    flags = [rank in relevant_ranks for rank in range(1, retrieved + 1)]
    assert judged_scores.ranked_context_precision(flags) in (None, pytest.approx(expected))
    recalls = [[1.0 if chunk == g else 0.0 for g in golden] for chunk in chunks_]
    assert overlap_matches(recalls, len(golden), 0.7).average_precision() == pytest.approx(expected)
