"""The named offline metrics of each family, in display order.

Each family maps a metric's column name to a ``MetricDefinition``: the function computing
it from that family's per-row input, the optional input fields it cannot do without, and the
reason its value is ``None`` when those inputs are present but the metric is still undefined.
Each also declares its ``scale`` (``results/kinds.py``): a 0-1 score unless said
otherwise, ``RATE`` for a 0/1 outcome. The evaluate run walks these tables; adding a metric is
adding an entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rag_evaluator.inputs import fields
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.offline import lexical, overlap, quality, retrieval, semantic
from rag_evaluator.results.kinds import RATE, SCORE, MetricKind, MetricScale

InputT = TypeVar("InputT")

LEXICAL = "lexical"
OVERLAP = "overlap"
RETRIEVAL = "retrieval"
SEMANTIC = "semantic"
QUALITY = "quality"
OFFLINE_FAMILIES = (LEXICAL, OVERLAP, RETRIEVAL, SEMANTIC, QUALITY)

# The optional EvaluationItem fields a metric may need, and how to name their absence.
CONTEXTS = "contexts"
RELEVANT_CONTEXTS = "relevant_contexts"
REQUIRED_FACTS = "required_facts"
RETRIEVAL_SCORES = "retrieval_scores"


@dataclass(frozen=True)
class InputFileNames:
    """The input files as the user named them (``--answers``, ``--ground-truth``), for the
    warnings that say which file lacks a column."""

    answers: str = "rag_answers.csv"
    ground_truth: str = "ground_truth.csv"


def missing_input_reason(field_name: str, files: InputFileNames) -> str:
    """Why a metric needing ``field_name`` is empty: the column and the file it belongs in."""
    column, file_name = {
        CONTEXTS: (fields.CONTEXTS, files.answers),
        RELEVANT_CONTEXTS: (fields.RELEVANT_CONTEXTS, files.ground_truth),
        REQUIRED_FACTS: (fields.REQUIRED_FACTS, files.ground_truth),
        RETRIEVAL_SCORES: (fields.RETRIEVAL_SCORES, files.answers),
    }[field_name]
    return f"no {column} in {file_name}"


@dataclass(frozen=True)
class MetricDefinition(Generic[InputT]):
    """One metric column: how to compute it and why it can be empty.

    A text column (``Quality Failures``) computes a string, ``""`` for nothing to say.
    """

    name: str
    compute: Callable[[InputT], float | str | None]
    needs: tuple[str, ...] = ()
    # Why ``compute`` gave ``None``: fixed, or read from the row when there are several causes.
    undefined_reason: str | Callable[[InputT], str] = ""
    # The metric's kind and range: how it is summarised, compared and calibrated.
    scale: MetricScale = SCORE
    # A lower value is the better one (hallucination, dont_know): the direction gates
    # (--fail-over instead of --fail-under), compare and the report judge it by.
    lower_is_better: bool = False

    def reason_for(self, family_input: InputT) -> str:
        """Why the metric is undefined for this row's input."""
        reason = self.undefined_reason
        return reason if isinstance(reason, str) else reason(family_input)


def best_over_references(values: Iterable[float | None]) -> float | None:
    """A metric over several reference answers: the best value any of them gives (the
    answer needs to match one); ``None`` when none gives one."""
    scored = [value for value in values if value is not None]
    return max(scored) if scored else None


def _against_references(
    score: Callable[[str, str], float | None],
) -> Callable[[LexicalInputs], float | None]:
    """``score(answer, reference)`` of a row, best over its reference answers."""
    return lambda row: best_over_references(
        score(row.item.rag_answer, reference) for reference in row.item.references()
    )


@dataclass(frozen=True)
class LexicalInputs:
    """A row's texts with its keyword coverage against each reference answer, computed once
    for the two columns using it."""

    item: EvaluationItem
    coverages: tuple[float | None, ...]

    @classmethod
    def of(cls, item: EvaluationItem) -> LexicalInputs:
        answer = item.rag_answer
        references = item.references()
        return cls(item, tuple(lexical.keyword_coverage(answer, text) for text in references))

    @property
    def keyword_coverage(self) -> float | None:
        return best_over_references(self.coverages)

    def completeness(self) -> float | None:
        """``answer_completeness``, best over the reference answers."""
        answer, references = self.item.rag_answer, self.item.references()
        return best_over_references(
            lexical.completeness_from_coverage(answer, reference, coverage)
            for reference, coverage in zip(references, self.coverages, strict=True)
        )


@dataclass(frozen=True)
class RetrievalInputs:
    """A row's retrieval input: its ranked matches, the cut-off k and its context overlap
    (mean best ROUGE-L recall of the golden chunks)."""

    ranked: retrieval.RankedMatches
    k: int
    context_overlap: float | None = None


@dataclass(frozen=True)
class BertScores:
    """BERTScore of the answer against the ground truth, as the bert-score package gives it."""

    precision: float
    recall: float
    f1: float

    @classmethod
    def best_of(cls, scores: Sequence[BertScores | None]) -> BertScores | None:
        """Over several reference answers: each component's best, as bert-score takes it
        for several references; ``None`` when none was scored."""
        scored = [score for score in scores if score is not None]
        if not scored:
            return None
        return cls(
            max(score.precision for score in scored),
            max(score.recall for score in scored),
            max(score.f1 for score in scored),
        )


@dataclass(frozen=True)
class SemanticInputs:
    """A row's texts with the cosines the embedding pass computed for them.

    ``question_context_cosines`` has one entry per non-blank context;
    ``sentence_support`` one per answer sentence: its best cosine with any context
    (``None`` when there is no context). ``bert_scores`` is ``None`` when not computed.
    """

    item: EvaluationItem
    answer_ground_truth_cosine: float | None
    question_answer_cosine: float | None
    question_context_cosines: tuple[float, ...]
    sentence_support: tuple[float | None, ...]
    bert_scores: BertScores | None


def quality_inputs(
    item: EvaluationItem,
    fallbacks: quality.FallbackPhrases,
    min_retrieval_score: float,
    require_citations: bool = True,
) -> quality.QualityAssessment:
    """A row's quality checks, computed together because ``quality_pass`` and the failures
    read them all. A check whose input is missing (no Contexts, no Retrieval Scores) is
    ``None``, as is one that does not apply."""
    return quality.assess_answer(
        item.question,
        item.rag_answer,
        item.contexts,
        item.retrieval_scores,
        fallback_phrases=fallbacks,
        min_retrieval_score=min_retrieval_score,
        require_citations=require_citations,
    )


def _facts(item: EvaluationItem) -> list[str]:
    return item.required_facts or []


def _rouge(key: str) -> Callable[[EvaluationItem], float | None]:
    def compute(item: EvaluationItem) -> float | None:
        return best_over_references(
            None
            if (scores := overlap.rouge_f1(item.rag_answer, reference)) is None
            else scores[key]
            for reference in item.references()
        )

    return compute


def _bert(component: str) -> Callable[[SemanticInputs], float | None]:
    def compute(inputs: SemanticInputs) -> float | None:
        raw = None if inputs.bert_scores is None else getattr(inputs.bert_scores, component)
        return semantic.pair_score(inputs.item.rag_answer, inputs.item.ground_truth, raw)

    return compute


def _table(*definitions: MetricDefinition[InputT]) -> dict[str, MetricDefinition[InputT]]:
    return {definition.name: definition for definition in definitions}


_NO_KEYWORDS = "the ground truth has no keywords"
_EMPTY_GROUND_TRUTH = "the ground truth is empty"
_NO_GOLDEN = "no relevant chunk is listed"

LEXICAL_METRICS: dict[str, MetricDefinition[LexicalInputs]] = _table(
    MetricDefinition("exact_match", _against_references(lexical.exact_match), scale=RATE),
    MetricDefinition(
        "keyword_coverage", lambda row: row.keyword_coverage, undefined_reason=_NO_KEYWORDS
    ),
    MetricDefinition(
        "number_match",
        _against_references(lexical.number_match),
        undefined_reason="the ground truth has no numbers",
    ),
    MetricDefinition(
        "answer_completeness", lambda row: row.completeness(), undefined_reason=_NO_KEYWORDS
    ),
    MetricDefinition("citation_quality", lambda row: lexical.citation_quality(row.item.rag_answer)),
    MetricDefinition(
        "dont_know",
        lambda row: lexical.dont_know(row.item.rag_answer),
        scale=RATE,
        lower_is_better=True,
    ),
    MetricDefinition(
        "list_coverage",
        _against_references(lexical.list_coverage),
        undefined_reason="the ground truth has no markdown list",
    ),
    MetricDefinition(
        "fact_score",
        lambda row: lexical.fact_score(row.item.rag_answer, _facts(row.item)),
        needs=(REQUIRED_FACTS,),
        undefined_reason="the Required Facts cell lists no fact",
    ),
)

OVERLAP_METRICS: dict[str, MetricDefinition[EvaluationItem]] = _table(
    MetricDefinition(
        "bleu",
        lambda item: overlap.bleu(item.rag_answer, item.references()),
        undefined_reason=_EMPTY_GROUND_TRUTH,
    ),
    MetricDefinition("rouge1", _rouge("rouge1"), undefined_reason=_EMPTY_GROUND_TRUTH),
    MetricDefinition("rouge2", _rouge("rouge2"), undefined_reason=_EMPTY_GROUND_TRUTH),
    MetricDefinition("rouge_l", _rouge("rougeL"), undefined_reason=_EMPTY_GROUND_TRUTH),
)

_RETRIEVAL_NEEDS = (CONTEXTS, RELEVANT_CONTEXTS)
RETRIEVAL_METRICS: dict[str, MetricDefinition[RetrievalInputs]] = _table(
    MetricDefinition(
        "precision_at_k",
        lambda row: row.ranked.precision_at_k(row.k),
        needs=_RETRIEVAL_NEEDS,
    ),
    MetricDefinition(
        "recall_at_k",
        lambda row: row.ranked.recall_at_k(row.k),
        needs=_RETRIEVAL_NEEDS,
        undefined_reason=_NO_GOLDEN,
    ),
    MetricDefinition(
        "f1_at_k",
        lambda row: row.ranked.f1_at_k(row.k),
        needs=_RETRIEVAL_NEEDS,
        undefined_reason=_NO_GOLDEN,
    ),
    MetricDefinition(
        "context_precision",
        lambda row: row.ranked.average_precision(),
        needs=_RETRIEVAL_NEEDS,
    ),
    MetricDefinition(
        "mrr",
        lambda row: row.ranked.reciprocal_rank(),
        needs=_RETRIEVAL_NEEDS,
        undefined_reason=_NO_GOLDEN,
    ),
    MetricDefinition(
        "ndcg_at_k",
        lambda row: row.ranked.ndcg_at_k(row.k),
        needs=_RETRIEVAL_NEEDS,
        undefined_reason=_NO_GOLDEN,
    ),
    MetricDefinition(
        "hybrid_log_rank",
        lambda row: row.ranked.hybrid_log_rank(),
        needs=_RETRIEVAL_NEEDS,
        undefined_reason=_NO_GOLDEN,
    ),
    MetricDefinition(
        "context_overlap",
        lambda row: row.context_overlap,
        needs=_RETRIEVAL_NEEDS,
        undefined_reason=_NO_GOLDEN,
    ),
)


def _rate(passed: bool | None) -> int | None:
    """A yes/no check as its 0/1 column value."""
    return None if passed is None else int(passed)


def _check(name: str, needs: tuple[str, ...] = ()) -> MetricDefinition[quality.QualityAssessment]:
    return MetricDefinition(
        name,
        lambda row: _rate(row.checks[name]),
        needs=needs,
        undefined_reason=lambda row: row.not_applicable[name],
        scale=RATE,
    )


QUALITY_METRICS: dict[str, MetricDefinition[quality.QualityAssessment]] = _table(
    _check(quality.NOT_EMPTY),
    _check(quality.HAS_CONTEXTS, (CONTEXTS,)),
    _check(quality.CITATIONS, (CONTEXTS,)),
    _check(quality.NO_FALLBACK),
    _check(quality.RETRIEVAL_SCORE, (RETRIEVAL_SCORES,)),
    _check(quality.LIST_FORMAT),
    MetricDefinition(quality.PASS, lambda row: _rate(row.passed), scale=RATE),
    MetricDefinition(quality.FAILURES, lambda row: "; ".join(row.failures)),
)
# Columns holding text, not a score: no summary row, never a --fail-under metric.
TEXT_COLUMNS = frozenset((quality.FAILURES,))


def _no_question_context_cosine(inputs: SemanticInputs) -> str:
    if not inputs.item.question.strip():
        return "the question is empty"
    return "no context was retrieved"


SEMANTIC_METRICS: dict[str, MetricDefinition[SemanticInputs]] = _table(
    MetricDefinition(
        "semantic_similarity",
        lambda inputs: semantic.pair_score(
            inputs.item.rag_answer, inputs.item.ground_truth, inputs.answer_ground_truth_cosine
        ),
        undefined_reason=_EMPTY_GROUND_TRUTH,
    ),
    MetricDefinition(
        "answer_relevance",
        lambda inputs: semantic.pair_score(
            inputs.item.rag_answer, inputs.item.question, inputs.question_answer_cosine
        ),
        undefined_reason="the question is empty",
    ),
    MetricDefinition(
        "answer_correctness",
        lambda inputs: semantic.pair_score(
            inputs.item.rag_answer, inputs.item.ground_truth, inputs.answer_ground_truth_cosine
        ),
        undefined_reason=_EMPTY_GROUND_TRUTH,
    ),
    MetricDefinition(
        "context_relevance",
        lambda inputs: semantic.mean_similarity_from_cosines(inputs.question_context_cosines),
        needs=(CONTEXTS,),
        undefined_reason=_no_question_context_cosine,
    ),
    MetricDefinition(
        "context_sufficiency",
        lambda inputs: semantic.share_at_least_from_cosines(
            inputs.question_context_cosines, semantic.SUFFICIENCY_THRESHOLD
        ),
        needs=(CONTEXTS,),
        undefined_reason=_no_question_context_cosine,
    ),
    MetricDefinition(
        "hallucination",
        lambda inputs: semantic.hallucination_from_cosines(inputs.sentence_support),
        needs=(CONTEXTS,),
        undefined_reason="the answer has no sentence",
        lower_is_better=True,
    ),
    MetricDefinition(
        "bert_score_precision", _bert("precision"), undefined_reason=_EMPTY_GROUND_TRUTH
    ),
    MetricDefinition("bert_score_recall", _bert("recall"), undefined_reason=_EMPTY_GROUND_TRUTH),
    MetricDefinition("bert_score_f1", _bert("f1"), undefined_reason=_EMPTY_GROUND_TRUTH),
)

FAMILY_METRICS: dict[str, dict[str, MetricDefinition[Any]]] = {
    LEXICAL: LEXICAL_METRICS,
    OVERLAP: OVERLAP_METRICS,
    RETRIEVAL: RETRIEVAL_METRICS,
    SEMANTIC: SEMANTIC_METRICS,
    QUALITY: QUALITY_METRICS,
}


# Every offline metric's declared scale, text columns left out.
METRIC_SCALES: dict[str, MetricScale] = {
    name: definition.scale
    for table in FAMILY_METRICS.values()
    for name, definition in table.items()
    if name not in TEXT_COLUMNS
}
# Columns whose summary is a pass rate (count/total with a Wilson interval), not a mean.
RATE_COLUMNS = frozenset(
    name for name, scale in METRIC_SCALES.items() if scale.kind is MetricKind.BINARY
)
# The offline metrics where a lower value is the better one (every other is higher-is-better).
LOWER_IS_BETTER = frozenset(
    name
    for table in FAMILY_METRICS.values()
    for name, definition in table.items()
    if definition.lower_is_better
)


def metric_names(family: str) -> list[str]:
    """The column names of a family, in display order."""
    return list(FAMILY_METRICS[family])


def missing_inputs(item: EvaluationItem, definition: MetricDefinition[Any]) -> list[str]:
    """The optional fields ``definition`` needs that ``item`` lacks."""
    return [name for name in definition.needs if getattr(item, name) is None]
