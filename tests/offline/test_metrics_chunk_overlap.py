"""Overlap matching (``--match overlap``) and ``context_overlap``: ROUGE-L recall of the golden
chunk, checked against rouge-score by hand and on random texts; every ranking metric in
every matching mode."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from evaluate_support import (
    Workspace,
    only_results,
    prepare_workspace,
    read_results,
    run_cli,
    write_csv,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from test_metrics_retrieval import QRELS, RUN, TREC_EVAL, chunks

from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.metrics import (
    MetricOptions,
    compute_offline_metrics,
    context_overlap,
    f1_at_k,
    hybrid_log_rank_score,
    mrr,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from rag_evaluator.offline.chunk_overlap import ChunkTokens, rouge_l_recall
from rag_evaluator.offline.retrieval import overlap_matches


@lru_cache(maxsize=1)
def rouge_l() -> Any:
    from rouge_score.rouge_scorer import RougeScorer

    from rag_evaluator.offline.overlap import UnicodeRougeTokenizer

    # rouge-score's ROUGE-L with the Unicode tokenizer (issue 22), unstemmed as the run is.
    return RougeScorer(["rougeL"], tokenizer=UnicodeRougeTokenizer(use_stemmer=False))


def rouge_score_recall(golden: str, retrieved: str) -> float:
    return float(rouge_l().score(golden, retrieved)["rougeL"].recall)


def recall(golden: str, retrieved: str) -> float:
    tokens = ChunkTokens()
    return rouge_l_recall(tokens.encode(golden), tokens.encode(retrieved))


# --- ROUGE-L recall, worked by hand ---
HAND_WORKED = [
    # golden: the cat sat on the mat (6 tokens); retrieved: on the mat the cat sat quietly.
    # Longest common subsequence: "the cat sat" or "on the mat", 3 tokens -> 3/6.
    ("the cat sat on the mat", "on the mat the cat sat quietly", 0.5),
    # The golden chunk inside a longer chunk (another chunking of the same page): all 5
    # tokens in order -> 1, whatever surrounds them.
    (
        "The HQ is in Paris.",
        "Offices. The HQ is in Paris. The Annex is in Lyon; both open at 9.",
        1.0,
    ),
    # Case and punctuation are not tokens: territory 118 uses factor 2 061 (6 tokens, "2.061"
    # splits at the dot); the retrieved chunk adds "a" and "of" between them -> 6/6.
    ("Territory 118, uses factor 2.061.", "territory 118 uses a factor of 2.061", 1.0),
    # 7 of 10 tokens in order: 0.7, exactly the default threshold.
    ("one two three four five six seven eight nine ten", "one two three four five six seven", 0.7),
    # Words of any script are tokens (issue 22): le café coûte 3 euros (5 tokens); "cafe
    # coute" shares le, 3, euros -> 3/5.
    ("Le café coûte 3 euros", "Le cafe coute 3 euros", 0.6),
    # Scripts without spaces: one token per character; the same text covers all of it.
    ("東京は日本の首都です", "東京は日本の首都です", 1.0),
    # 東京は日本 (5 characters) in a chunk that says 東京は大きい日本: 東京は, 日本 in order -> 5/5.
    ("東京は日本", "東京は大きい日本の都市", 1.0),
    # Word order matters: reversed, the LCS is one token of 3 -> 1/3.
    ("alpha beta gamma", "gamma beta alpha", 1 / 3),
    ("", "anything", 0.0),
    ("something", "", 0.0),
]


@pytest.mark.parametrize(("golden", "retrieved", "expected"), HAND_WORKED)
def test_rouge_l_recall_hand_worked_and_as_rouge_score(
    golden: str, retrieved: str, expected: float
) -> None:
    assert recall(golden, retrieved) == pytest.approx(expected)
    assert recall(golden, retrieved) == pytest.approx(rouge_score_recall(golden, retrieved))


WORDS = ["the", "cat", "Sat", "mat", "on", "a", "2.061", "118", "café", "rates", "rate", "X-1"]
SEPARATORS = [" ", "  ", ", ", ". ", "\n", "-", "; "]
texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=40).map(
    lambda parts: "".join(word + separator for word, separator in parts)
)


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_rouge_l_recall_is_rouge_scores_on_random_texts(golden: str, retrieved: str) -> None:
    assert recall(golden, retrieved) == pytest.approx(rouge_score_recall(golden, retrieved))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_rouge_l_recall_is_rouge_scores_on_any_text(golden: str, retrieved: str) -> None:
    assert recall(golden, retrieved) == pytest.approx(rouge_score_recall(golden, retrieved))


def test_each_chunk_is_tokenized_once_and_tokens_share_codes() -> None:
    tokens = ChunkTokens()
    first = tokens.encode("The cat sat.")
    assert tokens.encode("The cat sat.") is first
    assert tokens.encode("the CAT, sat") == first  # same tokens, same code string
    assert len(first) == 3


# --- context_overlap, worked by hand ---


def test_context_overlap_is_the_mean_best_recall_of_the_golden_chunks() -> None:
    golden = ["the cat sat on the mat", "The HQ is in Paris."]
    retrieved = ["on the mat the cat sat quietly", "Offices. The HQ is in Paris. Annex."]
    # Golden 1: best 0.5 (against retrieved 1; 0 against retrieved 2). Golden 2: 1.0.
    # Mean (0.5 + 1.0) / 2 = 0.75.
    assert context_overlap(golden, retrieved_chunks=retrieved) == pytest.approx(0.75)
    # Nothing retrieved: nothing of the golden text was found.
    assert context_overlap(golden, retrieved_chunks=[]) == 0.0
    # No golden chunk: undefined.
    assert context_overlap([], retrieved_chunks=retrieved) is None
    # A golden chunk listed twice (or differing only in case and punctuation) counts once.
    repeated = [*golden, "the HQ is in PARIS"]
    assert context_overlap(repeated, retrieved_chunks=retrieved) == pytest.approx(0.75)


# --- the ranking metrics with overlap matching ---


@pytest.mark.parametrize("query", sorted(RUN))
@pytest.mark.parametrize("k", [3, 5])
def test_overlap_matching_gives_trec_eval_values(query: str, k: int) -> None:
    # "Chunk d1: some retrieved passage." covers 4 of the 5 tokens of "Chunk d2: …" (0.8):
    # at a threshold of 0.9 only the same chunk matches, as in trec_eval's judgements.
    retrieved, golden = chunks(RUN[query]), chunks(QRELS[query])
    expected = TREC_EVAL[query]
    strict: dict[str, Any] = {"retrieved_chunks": retrieved, "match": "overlap", "threshold": 0.9}
    assert precision_at_k(golden, k=k, **strict) == pytest.approx(expected[f"P@{k}"])
    assert recall_at_k(golden, k=k, **strict) == pytest.approx(expected[f"R@{k}"])
    assert ndcg_at_k(golden, k=k, **strict) == pytest.approx(expected[f"nDCG@{k}"])
    assert mrr(golden, **strict) == pytest.approx(expected["RR"])


def test_at_the_default_threshold_near_duplicates_match() -> None:
    # 0.8 >= 0.7: every retrieved chunk covers every golden one.
    retrieved, golden = chunks(RUN["q4"]), chunks(QRELS["q4"])
    assert precision_at_k(golden, retrieved_chunks=retrieved, k=2, match="overlap") == 1.0


def test_overlap_matching_bad_threshold_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="between 0 and 1"):
        overlap_matches([[0.5]], 1, 1.5)


# Four retrieved chunks, two golden ones: retrieved 2 holds golden 1, retrieved 4 golden 2;
# retrieved 1 and 3 are about other things. With k = 3 (n = 4, G = 2):
#   P@3 = 1/3; R@3 = 1/2; F1@3 = 2·(1/3)·(1/2) / (1/3 + 1/2) = 0.4; RR = 1/2;
#   nDCG@3 = (1/log2 3) / (1 + 1/log2 3) = 0.63093 / 1.63093 = 0.386853;
#   hybrid = 0.5·1 + 0.5·(log_rank(2) + log_rank(4)) / 2 = 0.5 + 0.5·(0.5 + 0) / 2 = 0.625
#   (log_rank(2) = 1 − ln 2 / ln 4 = 0.5, log_rank(4) = 0).
GOLDEN = [
    "The X200 pump has a two-year warranty covering parts and labour.",
    "Travel requests are approved by the line manager, then by finance above 1,000 EUR.",
]
OTHER = [
    "Lyon's office opened in March 2019 near the river.",
    "Our cafeteria serves vegetarian lunches every Thursday.",
]
EXPECTED = {
    "precision_at_k": 1 / 3,
    "recall_at_k": 0.5,
    "f1_at_k": 0.4,
    "mrr": 0.5,
    "ndcg_at_k": (1 / math.log2(3)) / (1 + 1 / math.log2(3)),
    "hybrid_log_rank": 0.625,
}


def score_one(retrieved: list[str], match: str) -> dict[str, Any]:
    item = EvaluationItem(1, "Q?", "A.", "A.", contexts=retrieved, relevant_contexts=list(GOLDEN))
    result = compute_offline_metrics([item], ["retrieval"], MetricOptions(k=3, match=match))
    return result.scores[1]


@pytest.mark.parametrize(
    "match",
    ["exact", pytest.param("similarity", marks=pytest.mark.needs_extra("semantic")), "overlap"],
)
def test_every_ranking_metric_in_every_matching_mode(match: str) -> None:
    scores = score_one([OTHER[0], GOLDEN[0], OTHER[1], GOLDEN[1]], match)
    for metric, expected in EXPECTED.items():
        assert scores[metric] == pytest.approx(expected), metric
    # The golden chunks were retrieved word for word.
    assert scores["context_overlap"] == pytest.approx(1.0)


def test_overlap_matching_finds_golden_chunks_cut_at_other_boundaries() -> None:
    # The RAG system's chunks hold the golden text with their neighbours' sentences.
    retrieved = [
        OTHER[0],
        "Warranty. " + GOLDEN[0] + " Pumps ship in 3 days.",
        OTHER[1],
        "Policy 7. " + GOLDEN[1],
    ]
    overlap = score_one(retrieved, "overlap")
    for metric, expected in EXPECTED.items():
        assert overlap[metric] == pytest.approx(expected), metric
    exact = score_one(retrieved, "exact")
    assert exact["recall_at_k"] == 0.0 and exact["mrr"] == 0.0
    # context_overlap does not depend on the matching mode.
    assert exact["context_overlap"] == overlap["context_overlap"] == pytest.approx(1.0)


def test_the_library_functions_agree_with_the_run() -> None:
    retrieved = [OTHER[0], GOLDEN[0], OTHER[1], GOLDEN[1]]
    overlap: dict[str, Any] = {"retrieved_chunks": retrieved, "match": "overlap"}
    assert precision_at_k(GOLDEN, k=3, **overlap) == pytest.approx(EXPECTED["precision_at_k"])
    assert recall_at_k(GOLDEN, k=3, **overlap) == pytest.approx(EXPECTED["recall_at_k"])
    assert f1_at_k(GOLDEN, k=3, **overlap) == pytest.approx(EXPECTED["f1_at_k"])
    assert mrr(GOLDEN, **overlap) == pytest.approx(EXPECTED["mrr"])
    assert ndcg_at_k(GOLDEN, k=3, **overlap) == pytest.approx(EXPECTED["ndcg_at_k"])
    assert hybrid_log_rank_score(GOLDEN, **overlap) == pytest.approx(EXPECTED["hybrid_log_rank"])


def test_a_repeat_with_the_same_tokens_is_dropped_before_ranking() -> None:
    # "the hq is in paris" repeats chunk 1 to ROUGE-L: dropped, GOLDEN[0] keeps rank 2.
    retrieved = ["The HQ is in Paris.", "the HQ is in Paris", GOLDEN[0]]
    assert mrr([GOLDEN[0]], retrieved_chunks=retrieved, match="overlap") == 0.5


def test_a_bad_overlap_threshold_is_refused_before_anything_runs() -> None:
    item = EvaluationItem(1, "Q", "A", "A", contexts=["c"], relevant_contexts=["c"])
    with pytest.raises(UsageError, match="--overlap-threshold must be between 0 and 1"):
        compute_offline_metrics(
            [item], ["retrieval"], MetricOptions(match="overlap", overlap_threshold=1.2)
        )


# --- through the CLI ---


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_csv(tmp_path / "questions.csv", ["Question Number", "Question"], [[1, "Warranty?"]])
    write_csv(
        tmp_path / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts"],
        [[1, "Two years.", json.dumps(GOLDEN)]],
    )
    retrieved = [OTHER[0], "Warranty. " + GOLDEN[0], "Policy 7. " + GOLDEN[1][:60]]
    write_csv(
        tmp_path / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts"],
        [[1, "Two years [2].", json.dumps(retrieved)]],
    )
    return space


def test_match_overlap_and_its_threshold_on_the_command_line(workspace: Workspace) -> None:
    # GOLDEN[1] is 15 tokens (travel requests are approved by the line manager then by
    # finance above 1 000 eur); its first 60 characters end "... then by fi", holding the
    # first 10: recall 10/15 = 0.667, below 0.7 and above 0.6.
    result = run_cli(["evaluate", "--metrics", "retrieval", "--match", "overlap", "--yes"])
    assert result.exit_code == 0, result.output
    row = only_results(workspace.directory).row(1)
    assert float(row["recall_at_k"]) == pytest.approx(0.5)
    # context_overlap = (1 + 10/15) / 2 = 0.8333.
    assert float(row["context_overlap"]) == pytest.approx(0.8333, abs=1e-4)

    lower = workspace.directory / "lower"
    result = run_cli(
        [
            "evaluate",
            "--metrics",
            "retrieval",
            "--match",
            "overlap",
            "--overlap-threshold",
            "0.6",
            "--output-dir",
            str(lower),
            "--yes",
        ]
    )
    assert result.exit_code == 0, result.output
    # A run without the judge is named for what it holds (issue 22).
    (path,) = lower.glob("metric_scores_*.csv")
    assert read_results(path).row(1)["recall_at_k"] == "1.0000"
