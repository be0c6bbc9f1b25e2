"""The offline metric families of an evaluate run: lexical, overlap, retrieval, semantic,
quality.

Walks the metric registry over the run's items and returns one score per question and
metric column (``None`` where the inputs are missing or the metric is undefined), plus one
warning per metric that left cells empty. ``OfflineScoring`` scores the items a chunk at a
time (an evaluate run streams its rows so); ``compute_offline_metrics`` scores them as one
chunk. Semantic scores and similarity matching use one embedding pass over every distinct
text of a chunk (the embeddings of earlier chunks' texts are kept). Prints nothing.
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.references import reference_free_metrics
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.offline import overlap, quality, retrieval, semantic
from rag_evaluator.offline.chunk_overlap import ChunkTokens
from rag_evaluator.offline.options import MetricOptions
from rag_evaluator.offline.registry import (
    FAMILY_METRICS,
    LEXICAL,
    OFFLINE_FAMILIES,
    OVERLAP,
    QUALITY,
    RETRIEVAL,
    SEMANTIC,
    BertScores,
    InputFileNames,
    LexicalInputs,
    MetricDefinition,
    RetrievalInputs,
    SemanticInputs,
    best_over_references,
    missing_input_reason,
    missing_inputs,
    quality_inputs,
)
from rag_evaluator.text.citations import find_citations

if TYPE_CHECKING:
    import numpy as np

    from rag_evaluator.offline.embeddings import EmbeddingMemory, EmbeddingTable

__all__ = [
    "MATCH_MODES",
    "OFFLINE_FAMILIES",
    "BatchProgress",
    "EmptyMetric",
    "InputFileNames",
    "MetricOptions",
    "OfflineMetricsResult",
    "OfflineNotes",
    "OfflineScoring",
    "ScoredChunk",
    "compute_offline_metrics",
    "families_with_inputs",
    "metric_columns",
    "not_applicable_rows",
    "similarity_ranking",
    "validate_options",
]

EXACT = retrieval.MatchMode.EXACT.value
SIMILARITY = retrieval.MatchMode.SIMILARITY.value
OVERLAP_MATCH = retrieval.MatchMode.OVERLAP.value
MATCH_MODES = tuple(mode.value for mode in retrieval.MatchMode)
_SHOWN_QUESTION_NUMBERS = 10
# The semantic family's BERTScore columns (bert_score_precision, _recall, _f1).
_BERT_SCORE = "bert_score_"

Progress = Callable[[str], None]
# (what is running, texts done, texts in all), after each batch of the embedding and
# BERTScore passes: what a progress bar needs.
BatchProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EmptyMetric:
    """A metric left empty for some questions: each reason with its question numbers."""

    metric: str
    reasons: tuple[tuple[str, tuple[int, ...]], ...]
    total: int

    @property
    def count(self) -> int:
        return sum(len(numbers) for _, numbers in self.reasons)

    def message(self) -> str:
        """``recall_at_k: left empty for 2 of 3 question(s): <reason> (question 2); …``."""
        details = "; ".join(
            f"{reason} (question {format_numbers(numbers, _SHOWN_QUESTION_NUMBERS)})"
            for reason, numbers in self.reasons
        )
        return f"{self.metric}: left empty for {self.count} of {self.total} question(s): {details}"


@dataclass(frozen=True)
class OfflineMetricsResult:
    """Scores per question and column; ``None`` marks a cell left empty.

    ``warnings`` holds every note (one per metric left empty, then the hints); a run shows the
    empty metrics (``empty``) as one table after its summary and warns about ``hints`` only,
    what the user should act on.
    """

    columns: list[str]
    # A score, or the text of a text column (Quality Failures); None for an empty cell.
    scores: dict[int, dict[str, float | str | None]]
    warnings: list[str] = field(default_factory=list)
    empty: list[EmptyMetric] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)


def not_applicable_rows(empty: Sequence[EmptyMetric]) -> list[tuple[tuple[str, ...], str, str]]:
    """The rows of the table of empty metrics: (the metrics, ``7 of 20``, why and for which
    questions), one row per reason and set of questions, the metrics sharing them together."""
    grouped: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    totals: dict[tuple[str, tuple[int, ...]], int] = {}
    for metric in empty:
        for reason, numbers in metric.reasons:
            grouped.setdefault((reason, numbers), []).append(metric.metric)
            totals[(reason, numbers)] = metric.total
    return [
        (
            tuple(metrics),
            f"{len(numbers)} of {totals[(reason, numbers)]}",
            f"{reason} (question {format_numbers(numbers, _SHOWN_QUESTION_NUMBERS)})",
        )
        for (reason, numbers), metrics in grouped.items()
    ]


def families_with_inputs(items: Sequence[EvaluationItem]) -> list[str]:
    """The offline families ``--metrics all`` should run: those whose inputs some item has.

    Lexical, overlap, semantic and quality need only the three spec columns; retrieval needs
    both Contexts and Relevant Contexts on at least one question.
    """
    if not items:
        return []
    families = [LEXICAL, OVERLAP]
    if any(item.contexts is not None and item.relevant_contexts is not None for item in items):
        families.append(RETRIEVAL)
    families += [SEMANTIC, QUALITY]
    return families


def _validated_families(families: Sequence[str]) -> list[str]:
    requested = {family.strip().lower() for family in families if family.strip()}
    unknown = sorted(requested - set(OFFLINE_FAMILIES))
    if unknown:
        raise UsageError(
            f"Unknown metric family: {', '.join(unknown)}. "
            f"Choose from: {', '.join(OFFLINE_FAMILIES)}"
        )
    return [family for family in OFFLINE_FAMILIES if family in requested]


def validate_options(options: MetricOptions) -> None:
    """Raise ``UsageError`` naming the option and a good value when one is out of range."""
    if isinstance(options.k, bool) or not isinstance(options.k, int) or options.k < 1:
        raise UsageError(f"--k must be a whole number of at least 1 (got {options.k}). Try --k 5")
    if options.match not in MATCH_MODES:
        raise UsageError(
            f"--match must be one of {', '.join(MATCH_MODES)} (got {options.match!r}). "
            "Try --match exact"
        )
    if not 0.0 <= options.similarity_threshold <= 1.0:
        raise UsageError(
            "--similarity-threshold must be between 0 and 1 "
            f"(got {options.similarity_threshold}). Try --similarity-threshold 0.8"
        )
    if not 0.0 <= options.overlap_threshold <= 1.0:
        raise UsageError(
            "--overlap-threshold must be between 0 and 1 "
            f"(got {options.overlap_threshold}). Try --overlap-threshold 0.7"
        )
    if not math.isfinite(options.min_retrieval_score):
        raise UsageError(
            f"--min-retrieval-score must be a finite number (got {options.min_retrieval_score})"
            ". Try --min-retrieval-score 0.5"
        )


def metric_columns(families: Sequence[str], *, references: bool = True) -> list[str]:
    """The metric columns the given families add, in display order (without references:
    only the metrics that read none)."""
    return [
        name
        for family in _validated_families(families)
        for name in _run_metrics(family, references)
    ]


def _run_metrics(family: str, references: bool) -> dict[str, MetricDefinition[Any]]:
    """The metrics of ``family`` a run computes: all, or without references those that
    read none."""
    definitions = FAMILY_METRICS[family]
    if references:
        return definitions
    kept = set(reference_free_metrics(family))
    return {name: definition for name, definition in definitions.items() if name in kept}


class _EmptyCells:
    """Collects, per metric, which questions were left empty and why."""

    def __init__(self) -> None:
        # Question numbers 8 bytes each: a metric left empty for a whole large run keeps one
        # number per question until the end.
        self._by_metric: dict[str, dict[str, array[int]]] = defaultdict(
            lambda: defaultdict(lambda: array("q"))
        )

    def add(self, metric: str, reason: str, question_number: int) -> None:
        self._by_metric[metric][reason].append(question_number)

    def metrics(self, columns: Sequence[str], total: int) -> list[EmptyMetric]:
        """The metrics left empty somewhere, in column order."""
        return [
            EmptyMetric(
                metric,
                tuple((reason, tuple(numbers)) for reason, numbers in reasons.items()),
                total,
            )
            for metric in columns
            if (reasons := self._by_metric.get(metric))
        ]


def _score_family(
    definitions: dict[str, MetricDefinition[Any]],
    item: EvaluationItem,
    build_input: Callable[[EvaluationItem, _RunData], Any],
    run: _RunData,
    row: dict[str, float | str | None],
    empty: _EmptyCells,
) -> None:
    family_input: Any = None
    for name, definition in definitions.items():
        absent = missing_inputs(item, definition)
        if absent:
            row[name] = None
            reason = missing_input_reason(absent[0], run.input_files)
            empty.add(name, reason, item.question_number)
            continue
        if family_input is None:
            family_input = build_input(item, run)
        value = definition.compute(family_input)
        row[name] = value
        if value is None:
            empty.add(name, definition.reason_for(family_input), item.question_number)


def compute_offline_metrics(
    items: Sequence[EvaluationItem],
    families: Sequence[str],
    options: MetricOptions,
    progress: Progress | None = None,
    input_files: InputFileNames | None = None,
    on_progress: BatchProgress | None = None,
) -> OfflineMetricsResult:
    """Score ``items`` with the requested offline ``families``.

    Raises ``UsageError`` for an unknown family or a bad option, and ``MissingExtraError``
    (with the install command) when overlap, semantic or ``--match similarity`` lacks its
    optional dependencies. ``progress`` receives short status lines (model loading, passes);
    ``on_progress(label, done, total)`` is called after each batch of the embedding
    (``"Embedding"``) and BERTScore (``"BERTScore"``) passes. ``input_files`` names the
    answers and ground-truth files in warnings (default: the default file names).
    """
    scoring = OfflineScoring(families, options, progress, input_files, on_progress)
    scores = scoring.score_all(items)
    notes = scoring.notes()
    return OfflineMetricsResult(
        notes.columns, scores, notes.warnings, list(notes.empty), list(notes.hints)
    )


@dataclass(frozen=True)
class ScoredChunk:
    """Consecutive items of a run and their scores by question number."""

    items: Sequence[EvaluationItem]
    scores: dict[int, dict[str, float | str | None]]


@dataclass(frozen=True)
class OfflineNotes:
    """What a run says once every row is scored: its columns, the metrics left empty for
    some questions and the hints the user should act on."""

    columns: list[str]
    empty: tuple[EmptyMetric, ...]
    hints: tuple[str, ...]

    @property
    def warnings(self) -> list[str]:
        """Every note: one per metric left empty, then the hints."""
        return [metric.message() for metric in self.empty] + list(self.hints)


class OfflineScoring:
    """The offline families of a run, scoring its items a chunk at a time.

    Only the chunk being scored is held (its texts, its embeddings and BERTScores, its
    scores); what the end of the run needs (the metrics left empty, the families without
    any value, whether any answer cites) is kept as running counts. A chunk's scores do not
    depend on the other chunks: scoring in chunks of any size gives the same values (the
    semantic ones to float rounding: a text's embedding moves in its last bits with the texts
    batched with it).
    """

    def __init__(
        self,
        families: Sequence[str],
        options: MetricOptions,
        progress: Progress | None = None,
        input_files: InputFileNames | None = None,
        on_progress: BatchProgress | None = None,
    ) -> None:
        self.chosen = _validated_families(families)
        validate_options(options)
        self.options = options
        self._report = progress or _silent
        self._on_progress = on_progress
        self._input_files = input_files or InputFileNames()
        self._fallbacks = quality.FallbackPhrases.for_option(options.fallback_phrases)
        self._similarity_retrieval = RETRIEVAL in self.chosen and options.match == SIMILARITY
        if OVERLAP in self.chosen:
            overlap.require_overlap_extra()
        self.tables = {family: _run_metrics(family, options.references) for family in self.chosen}
        self.columns = [name for table in self.tables.values() for name in table]
        self._bert_score = SEMANTIC in self.chosen and any(
            name.startswith(_BERT_SCORE) for name in self.columns
        )
        self._empty = _EmptyCells()
        self._rows = 0
        self._families_with_values: set[str] = set()
        self._failed_citations = 0
        self._any_cited = False
        # Embeddings kept from chunk to chunk: a context many questions retrieve is embedded
        # once, not once per chunk.
        self._memory: EmbeddingMemory | None = None

    def chunks(
        self, items: Iterable[EvaluationItem], chunk_rows: int | None
    ) -> Iterator[ScoredChunk]:
        """The items' scores, ``chunk_rows`` items at a time (all at once with ``None``), in
        the items' order. Models are announced (``progress``) with the first chunk only."""
        if chunk_rows is None:
            # One chunk: a sequence is read as it is (a spool's items stay on disk, read
            # again for each pass), never copied.
            whole = items if isinstance(items, Sequence) else list(items)
            yield ScoredChunk(whole, self._score_chunk(whole, True))
            return
        iterator = iter(items)
        first = True
        while True:
            batch = list(islice(iterator, chunk_rows))
            if not batch and not first:
                return
            yield ScoredChunk(batch, self._score_chunk(batch, first))
            first = False

    def score_all(
        self, items: Sequence[EvaluationItem]
    ) -> dict[int, dict[str, float | str | None]]:
        """Every item's scores by question number, the items scored as one chunk."""
        scores: dict[int, dict[str, float | str | None]] = {}
        for chunk in self.chunks(items, None):
            scores.update(chunk.scores)
        return scores

    def _score_chunk(
        self, items: Sequence[EvaluationItem], announce: bool
    ) -> dict[int, dict[str, float | str | None]]:
        report = self._report if announce else _silent
        embeddings: EmbeddingTable | None = None
        bert_scores: dict[tuple[str, str], BertScores] = {}
        # The first chunk loads the models even when empty, as a run of no item does.
        if (items or announce) and (SEMANTIC in self.chosen or self._similarity_retrieval):
            embeddings = _embed_run(
                items,
                self.chosen,
                self.options,
                self._similarity_retrieval,
                report,
                self._on_progress,
                self._embedding_memory(),
            )
        if (items or announce) and self._bert_score:
            bert_scores = _bert_score_run(items, self.options, report, self._on_progress)
        run = _RunData(
            self.options,
            embeddings,
            bert_scores,
            self._input_files,
            self._fallbacks,
            ChunkTokens(),
        )
        scores: dict[int, dict[str, float | str | None]] = {}
        for item in items:
            row: dict[str, float | str | None] = {}
            for family, table in self.tables.items():
                _score_family(table, item, _INPUT_BUILDERS[family], run, row, self._empty)
            scores[item.question_number] = row
            self._count(item, row)
        return scores

    def _embedding_memory(self) -> EmbeddingMemory:
        if self._memory is None:
            from rag_evaluator.offline.embeddings import EmbeddingMemory

            self._memory = EmbeddingMemory()
        return self._memory

    def _count(self, item: EvaluationItem, row: dict[str, float | str | None]) -> None:
        """Keep what the notes at the end need of one scored row."""
        self._rows += 1
        for family, table in self.tables.items():
            if family not in self._families_with_values and any(
                row.get(name) is not None for name in table
            ):
                self._families_with_values.add(family)
        if QUALITY in self.tables and self.options.require_citations:
            self._failed_citations += row.get(quality.CITATIONS) == 0
            if not self._any_cited and find_citations(item.rag_answer):
                self._any_cited = True

    def notes(self) -> OfflineNotes:
        """The run's notes, once every chunk is scored."""
        empty_metrics = self._empty.metrics(self.columns, self._rows)
        hints = _families_without_values(
            self.tables, self._families_with_values, self._rows, empty_metrics
        )
        if QUALITY in self.tables and self.options.require_citations:
            hints += _no_citation_warning(self._rows, self._failed_citations, self._any_cited)
        return OfflineNotes(self.columns, tuple(empty_metrics), tuple(hints))


def _silent(_message: str) -> None:
    return None


def _families_without_values(
    tables: dict[str, dict[str, MetricDefinition[Any]]],
    families_with_values: set[str],
    question_count: int,
    empty_metrics: Sequence[EmptyMetric],
) -> list[str]:
    """A warning per family asked for that has no value at all: something to act on (its
    inputs are missing), unlike the cells of a metric that does not apply to some answers."""
    reasons = {metric.metric: [reason for reason, _ in metric.reasons] for metric in empty_metrics}
    hints = []
    for family, definitions in tables.items():
        if not question_count or family in families_with_values:
            continue
        why = list(
            dict.fromkeys(reason for name in definitions for reason in reasons.get(name, []))
        )
        hints.append(
            f"{family}: none of its metrics has a value for any of the {question_count} "
            f"question(s): {'; '.join(why)}. Give the run what the family needs, or leave it "
            "out of --metrics"
        )
    return hints


def _no_citation_warning(question_count: int, failed: int, any_cited: bool) -> list[str]:
    """A hint when no answer of the run cites anything: the system is likely not asked to
    cite, and every answer failing quality_citations says nothing about it."""
    if not failed or any_cited:
        return []
    return [
        f"{quality.CITATIONS}: none of the {question_count} answer(s) cites a source as [n], so "
        f"the check fails for {failed}. If your RAG system is not asked to cite, run "
        "with --no-require-citations"
    ]


@dataclass(frozen=True)
class _RunData:
    """What the per-row inputs of every family are built from."""

    options: MetricOptions
    embeddings: EmbeddingTable | None
    bert_scores: dict[tuple[str, str], BertScores]
    input_files: InputFileNames
    fallbacks: quality.FallbackPhrases
    # rouge-score tokens of every chunk, computed once per run (overlap matching and
    # context_overlap).
    chunk_tokens: ChunkTokens


def _text_inputs(item: EvaluationItem, _run: _RunData) -> EvaluationItem:
    return item


def _lexical_inputs(item: EvaluationItem, _run: _RunData) -> LexicalInputs:
    return LexicalInputs.of(item)


def _retrieval_inputs(item: EvaluationItem, run: _RunData) -> RetrievalInputs:
    retrieved = item.contexts or []
    golden = item.relevant_contexts or []
    golden_count = len(retrieval.distinct_token_chunks(golden, run.chunk_tokens))
    recalls = retrieval.overlap_recalls(retrieved, golden, run.chunk_tokens)
    if run.options.match == OVERLAP_MATCH:
        ranked = retrieval.overlap_matches(recalls, golden_count, run.options.overlap_threshold)
    else:
        ranked = _ranked_matches(item, run.options, run.embeddings)
    return RetrievalInputs(
        ranked, run.options.k, retrieval.context_overlap_from_recalls(recalls, golden_count)
    )


def _semantic_row_inputs(item: EvaluationItem, run: _RunData) -> SemanticInputs:
    if run.embeddings is None:
        raise RuntimeError("semantic metrics need the embedding pass")  # a bug, not an input
    return _semantic_inputs(item, run.embeddings, run.bert_scores)


def _quality_inputs(item: EvaluationItem, run: _RunData) -> quality.QualityAssessment:
    return quality_inputs(
        item, run.fallbacks, run.options.min_retrieval_score, run.options.require_citations
    )


# How each family's per-row input is built (the registry's metrics read it).
_INPUT_BUILDERS: dict[str, Callable[[EvaluationItem, _RunData], Any]] = {
    LEXICAL: _lexical_inputs,
    OVERLAP: _text_inputs,
    RETRIEVAL: _retrieval_inputs,
    SEMANTIC: _semantic_row_inputs,
    QUALITY: _quality_inputs,
}


# --- retrieval matching ---


def _ranked_matches(
    item: EvaluationItem, options: MetricOptions, embeddings: EmbeddingTable | None
) -> retrieval.RankedMatches:
    retrieved = item.contexts or []
    golden = item.relevant_contexts or []
    if options.match == EXACT or embeddings is None:
        return retrieval.exact_matches(retrieved, golden)
    retrieved_chunks = _distinct_embedded(retrieval.distinct_chunks(retrieved), embeddings)
    golden_chunks = _distinct_embedded(retrieval.distinct_chunks(golden), embeddings)
    matrix = embeddings.best_pair_cosines(retrieved_chunks, golden_chunks)
    return retrieval.similarity_matches(
        matrix.tolist(), len(golden_chunks), options.similarity_threshold
    )


def similarity_ranking(
    golden_chunks: Sequence[str],
    retrieved_chunks: Sequence[str],
    threshold: float,
    embedding_model: str | None = None,
) -> retrieval.RankedMatches:
    """Chunk texts matched by cosine as a run with ``--match similarity`` matches them (the
    same model and embedding pass: long chunks by their best passage, repeats dropped)."""
    item = EvaluationItem(
        0, "", "", "", contexts=list(retrieved_chunks), relevant_contexts=list(golden_chunks)
    )
    options = MetricOptions(
        match=SIMILARITY, similarity_threshold=threshold, embedding_model=embedding_model
    )
    table = _embed_run([item], [RETRIEVAL], options, True, lambda _message: None, None)
    return _ranked_matches(item, options, table)


def _distinct_embedded(chunks: list[str], embeddings: EmbeddingTable) -> list[str]:
    """Chunks whose embedding repeats an earlier chunk's dropped, as the library's retrieval
    functions drop repeated embeddings (texts differing only where the
    model cannot see, such as case for an uncased model, are the same chunk to it)."""
    if len(chunks) < 2:
        return chunks
    passages = [embeddings.passage_vectors(chunk) for chunk in chunks]
    if all(len(vectors) == 1 for vectors in passages):
        import numpy as np

        stacked = np.concatenate(passages)
        identity = (stacked @ stacked.T).tolist()
    else:
        identity = [[_identity_cosine(one, other) for other in passages] for one in passages]
    return [chunks[index] for index in retrieval.first_occurrences(identity)]


def _identity_cosine(first: np.ndarray, second: np.ndarray) -> float:
    """How alike two chunks are embedded: the lowest cosine of corresponding passages, -1 when
    their passage counts differ."""
    if first.shape != second.shape:
        return -1.0
    return float((first * second).sum(axis=1).min())


# --- the embedding pass ---


def _nonblank(texts: Sequence[str] | None) -> list[str]:
    return [text for text in texts or [] if text.strip()]


def _texts_to_embed(
    items: Sequence[EvaluationItem], chosen: Sequence[str], similarity_retrieval: bool
) -> tuple[list[str], list[str]]:
    """The texts embedded whole (questions, answers, ground truths, answer sentences) and
    those embedded in passages (contexts and chunks, which are often longer than the model
    reads)."""
    whole: dict[str, None] = {}
    in_passages: dict[str, None] = {}
    for item in items:
        if SEMANTIC in chosen:
            for text in (item.question, item.rag_answer, *item.references()):
                if text.strip():
                    whole[text] = None
            for text in _nonblank(item.contexts):
                in_passages[text] = None
            if item.contexts is not None:
                for sentence in semantic.split_sentences(item.rag_answer):
                    whole[sentence] = None
        if similarity_retrieval:
            for text in retrieval.distinct_chunks(item.contexts or []):
                in_passages[text] = None
            for text in retrieval.distinct_chunks(item.relevant_contexts or []):
                in_passages[text] = None
    return list(whole), list(in_passages)


def _embed_run(
    items: Sequence[EvaluationItem],
    chosen: Sequence[str],
    options: MetricOptions,
    similarity_retrieval: bool,
    report: Progress,
    on_progress: BatchProgress | None,
    memory: EmbeddingMemory | None = None,
) -> EmbeddingTable:
    from rag_evaluator.offline import embeddings as embedding_shell

    feature = (
        embedding_shell.SEMANTIC_FEATURE
        if SEMANTIC in chosen
        else embedding_shell.SIMILARITY_MATCH_FEATURE
    )
    embedding_shell.require_semantic_extra(feature, bert_score=SEMANTIC in chosen)
    report(f"Loading embedding model {embedding_shell.describe_model(options.embedding_model)}")
    embedder = embedding_shell.load_text_embedder(options.embedding_model)
    whole, in_passages = _texts_to_embed(items, chosen, similarity_retrieval)
    distinct = len(set(whole) | set(in_passages))
    report(f"Embedding {distinct} distinct text(s), a long one as several passages")
    return embedder.embed_all(whole, in_passages, on_progress, memory)


def _bert_score_run(
    items: Sequence[EvaluationItem],
    options: MetricOptions,
    report: Progress,
    on_progress: BatchProgress | None,
) -> dict[tuple[str, str], BertScores]:
    from rag_evaluator.offline import embeddings as embedding_shell

    pairs = list(
        dict.fromkeys(
            (item.rag_answer, reference)
            for item in items
            for reference in item.references()
            if item.rag_answer.strip() and reference.strip()
        )
    )
    if not pairs:
        return {}
    report(f"Loading BERTScore model {embedding_shell.describe_model(options.bertscore_model)}")
    scorer = embedding_shell.load_bert_scorer(options.bertscore_model)
    report(f"Scoring {len(pairs)} answer(s) with BERTScore")
    values = scorer.score(
        [answer for answer, _ in pairs], [truth for _, truth in pairs], on_progress
    )
    return {pair: BertScores(*value) for pair, value in zip(pairs, values, strict=True)}


def _semantic_inputs(
    item: EvaluationItem,
    embeddings: EmbeddingTable,
    bert_scores: dict[tuple[str, str], BertScores],
) -> SemanticInputs:
    def cosine(first: str, second: str) -> float | None:
        if first in embeddings and second in embeddings:
            return embeddings.cosine(first, second)
        return None

    # A context is as close to a text as its closest passage.
    contexts = _nonblank(item.contexts)
    question_context: tuple[float, ...] = ()
    if contexts and item.question in embeddings:
        question_context = tuple(
            embeddings.best_passage_cosines([item.question], contexts)[0].tolist()
        )
    sentences = semantic.split_sentences(item.rag_answer) if item.contexts is not None else []
    best: list[float | None] = [None] * len(sentences)
    if sentences and contexts:
        best = embeddings.best_passage_cosines(sentences, contexts).max(axis=1).tolist()
    support = semantic.sentence_support(sentences, contexts, best)
    references = item.references()
    return SemanticInputs(
        item=item,
        answer_ground_truth_cosine=best_over_references(
            cosine(item.rag_answer, reference) for reference in references
        ),
        question_answer_cosine=cosine(item.rag_answer, item.question),
        question_context_cosines=question_context,
        sentence_support=support,
        bert_scores=BertScores.best_of(
            [bert_scores.get((item.rag_answer, reference)) for reference in references]
        ),
    )
