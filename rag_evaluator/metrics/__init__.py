"""rag-eval's metrics as a library: the offline families and the LLM-judged ones.

Conventions, the same for every function here:

- **Argument order**: ``question, answer, ground_truth, contexts``; each function takes the
  subset it needs, in that order (``keyword_coverage(answer, ground_truth)``,
  ``faithfulness(question, answer, contexts, client=...)``). The retrieval functions take the
  golden chunks first and the retrieved chunks by keyword (``retrieved_chunks=``); ``ragas``
  takes ``ground_truth`` and ``contexts`` by keyword. A call in an older order then fails
  instead of swapping two lists.
- **Returns**: a score is a ``float`` on 0-1, ``None`` where the metric is undefined for its
  inputs (recall with no golden chunk, a ground truth without keywords), never NaN. A yes/no
  check is a ``bool`` (``exact_match``, ``is_dont_know_answer``, ``is_matching``). Where there
  is more than a number the result is a small frozen dataclass (``RougeScores``,
  ``SemanticScores``, ``QualityAssessment``); those replacing a seed's dict also read as it
  (``rouge_scores(...)["rougeL"]``). ``ragas`` and ``factual_accuracy`` return their
  family's result (scores, reasons, usage and cost); ``rubric_scores`` a dict by criterion.
- **Bad argument values** raise ``UsageError`` (bad input data ``InputError``), both
  ``ValueError`` subclasses whose message says what to pass instead.

Retrieval, one function per metric with the matching mode as an argument::

    from rag_evaluator.metrics import precision_at_k, hybrid_log_rank_score

    golden = ["Chunk about Territory 118"]
    retrieved = ["Chunk about rates", "Chunk about Territory 118", "Chunk about rules"]
    precision_at_k(golden, retrieved_chunks=retrieved, k=2)                   # 0.5
    precision_at_k(golden, retrieved_chunks=retrieved, k=2, match="overlap")  # ROUGE-L >= 0.7
    hybrid_log_rank_score(golden, retrieved_chunks=retrieved)                 # 0.6845

``match="similarity"`` embeds chunk texts with the bundled all-MiniLM-L6-v2 (the semantic
extra) or takes embedding vectors. Seed 004's ``*_exact`` / ``*_similarity`` names remain as
deprecated aliases. Semantic functions on vectors (``semantic_similarity``,
``context_relevance``, ...) take any sequences of floats; ``load_text_embedder()`` makes them.
Seed 002's ``answer_hallucination`` and ``evaluate_all`` embed for you in one batched call.
``compute_offline_metrics`` scores whole ``EvaluationItem`` lists the way ``rag-eval
evaluate --metrics ...`` does.

The LLM-judged metrics take one item and the client of a ``with judge_client(...) as
client:`` block; see ``rag_evaluator.metrics.judged``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rag_evaluator.families.grading.factual_accuracy import FactualAccuracyResult
from rag_evaluator.families.ragas.family import RagasResult
from rag_evaluator.families.rubric.rubrics import Criterion, Rubric, Scale
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.metrics.judged import (
    AnswerClass,
    classify_answer,
    context_precision,
    context_recall,
    factual_accuracy,
    faithfulness,
    is_matching,
    judge_client,
    load_rubric,
    ragas,
    ragas_answer_relevance,
    rubric_scores,
)
from rag_evaluator.metrics.retrieval import (
    MatchMode,
    average_precision,
    context_overlap,
    f1_at_k,
    f1_at_k_exact,
    f1_at_k_similarity,
    hybrid_log_rank_score,
    hybrid_log_rank_score_exact,
    hybrid_log_rank_score_similarity,
    log_rank_score,
    mrr,
    ndcg_at_k,
    precision_at_k,
    precision_at_k_exact,
    precision_at_k_similarity,
    recall_at_k,
    recall_at_k_exact,
    recall_at_k_similarity,
)
from rag_evaluator.metrics.texts import (
    RougeScores,
    SemanticScores,
    answer_hallucination,
    bleu_score,
    evaluate_all,
    exact_match,
    is_dont_know_answer,
    rouge_score,
    rouge_scores,
)
from rag_evaluator.offline.embeddings import (
    BertScoreModel,
    TextEmbedder,
    load_bert_scorer,
    load_text_embedder,
)
from rag_evaluator.offline.lexical import (
    Keywords,
    answer_completeness,
    citation_quality,
    extract_keywords,
    extract_numbers,
    fact_score,
    keyword_coverage,
    list_coverage,
    list_items,
    number_match,
)
from rag_evaluator.offline.quality import (
    DEFAULT_FALLBACK_PHRASES,
    FallbackPhrases,
    QualityAssessment,
    assess_answer,
    cited_numbers,
)
from rag_evaluator.offline.registry import FAMILY_METRICS, OFFLINE_FAMILIES, InputFileNames
from rag_evaluator.offline.runner import (
    EmptyMetric,
    MetricOptions,
    OfflineMetricsResult,
    compute_offline_metrics,
    families_with_inputs,
)
from rag_evaluator.offline.semantic import (
    HALLUCINATION_THRESHOLD,
    SUFFICIENCY_THRESHOLD,
    Vector,
    answer_correctness,
    answer_relevance,
    context_relevance,
    context_sufficiency,
    cosine_similarity,
    hallucination,
    semantic_similarity,
    split_sentences,
)

if TYPE_CHECKING:
    from rag_evaluator.llm.client import ModelClient


def __getattr__(name: str) -> Any:
    # The client module imports the Anthropic SDK, which takes seconds: only on demand.
    if name == "ModelClient":
        from rag_evaluator.llm.client import ModelClient

        return ModelClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_FALLBACK_PHRASES",
    "FAMILY_METRICS",
    "HALLUCINATION_THRESHOLD",
    "OFFLINE_FAMILIES",
    "SUFFICIENCY_THRESHOLD",
    "AnswerClass",
    "BertScoreModel",
    "Criterion",
    "EmptyMetric",
    "EvaluationItem",
    "FactualAccuracyResult",
    "FallbackPhrases",
    "InputFileNames",
    "Keywords",
    "MatchMode",
    "MetricOptions",
    "ModelClient",
    "OfflineMetricsResult",
    "QualityAssessment",
    "RagasResult",
    "RougeScores",
    "Rubric",
    "Scale",
    "SemanticScores",
    "TextEmbedder",
    "TokenUsage",
    "Vector",
    "answer_completeness",
    "answer_correctness",
    "answer_hallucination",
    "answer_relevance",
    "assess_answer",
    "average_precision",
    "bleu_score",
    "citation_quality",
    "cited_numbers",
    "classify_answer",
    "compute_offline_metrics",
    "context_overlap",
    "context_precision",
    "context_recall",
    "context_relevance",
    "context_sufficiency",
    "cosine_similarity",
    "evaluate_all",
    "exact_match",
    "extract_keywords",
    "extract_numbers",
    "f1_at_k",
    "f1_at_k_exact",
    "f1_at_k_similarity",
    "fact_score",
    "factual_accuracy",
    "faithfulness",
    "families_with_inputs",
    "hallucination",
    "hybrid_log_rank_score",
    "hybrid_log_rank_score_exact",
    "hybrid_log_rank_score_similarity",
    "is_dont_know_answer",
    "is_matching",
    "judge_client",
    "keyword_coverage",
    "list_coverage",
    "list_items",
    "load_bert_scorer",
    "load_rubric",
    "load_text_embedder",
    "log_rank_score",
    "mrr",
    "ndcg_at_k",
    "number_match",
    "precision_at_k",
    "precision_at_k_exact",
    "precision_at_k_similarity",
    "ragas",
    "ragas_answer_relevance",
    "recall_at_k",
    "recall_at_k_exact",
    "recall_at_k_similarity",
    "rouge_score",
    "rouge_scores",
    "rubric_scores",
    "semantic_similarity",
    "split_sentences",
]
