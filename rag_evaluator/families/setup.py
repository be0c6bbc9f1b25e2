"""The LLM-judged families of a run (``ragas``, ``factual_accuracy``, ``classify``, ``match``,
``rubric``): their options checked, their rubric read, their embedding model wired in.

The core families stay pure: RAGAS answer relevance receives a question-similarity function,
built here on the semantic family's sentence-transformers model (bundled all-MiniLM-L6-v2 or
``--embedding-model``), loaded once and only when the run goes ahead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_evaluator.errors import MissingExtraError, UsageError
from rag_evaluator.families.base import JudgedFamily
from rag_evaluator.families.defaults import AUTO
from rag_evaluator.families.grading.classify import CLASSIFY_FAMILY, ClassifyFamily
from rag_evaluator.families.grading.factual_accuracy import (
    FACTUAL_ACCURACY_FAMILY,
    FactualAccuracyFamily,
)
from rag_evaluator.families.grading.match import MATCH_FAMILY, MatchFamily
from rag_evaluator.families.ragas.family import (
    METHOD_EMBEDDINGS,
    METHOD_RATING,
    RAGAS_FAMILY,
    RAGAS_METRICS,
    RagasFamily,
)
from rag_evaluator.families.rubric.family import RUBRIC_FAMILY, RubricFamily
from rag_evaluator.families.rubric.rubric_file import load_rubric
from rag_evaluator.families.rubric.rubrics import GROUND_TRUTH_INPUT, Rubric
from rag_evaluator.inputs.fields import CONTEXTS
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.references import RAGAS_REFERENCE_FREE
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.offline import embeddings

logger = logging.getLogger(__name__)

ANSWER_RELEVANCE_METHODS = (AUTO, METHOD_EMBEDDINGS, METHOD_RATING)
EMBEDDINGS_FEATURE = "RAGAS answer relevance by embeddings (--answer-relevance embeddings)"


@dataclass(frozen=True)
class LlmFamilyOptions:
    """``--rubric``, ``--answer-relevance`` and the shared ``--embedding-model``."""

    rubric_path: Path | None = None
    answer_relevance: str = AUTO
    embedding_model: str | None = None


class QuestionEmbeddings:
    """Cosines of a question with generated questions, on a sentence-transformers model."""

    def __init__(self, model_name: str | None) -> None:
        self.model_name = model_name
        self.description = embeddings.describe_model(model_name)
        self._embedder: embeddings.TextEmbedder | None = None

    def load(self) -> embeddings.TextEmbedder:
        """The model, loaded on first use (once per process)."""
        if self._embedder is None:
            self._embedder = embeddings.load_text_embedder(self.model_name)
        return self._embedder

    def __call__(self, question: str, generated: Sequence[str]) -> list[float]:
        table = self.load().embed_all([question, *generated])
        return [table.cosine(question, text) for text in generated]


@dataclass(frozen=True)
class LlmFamilySetup:
    """What the LLM families of a run need, settled before any file is read."""

    names: tuple[str, ...]
    rubric: Rubric | None
    relevance_method: str
    question_embeddings: QuestionEmbeddings | None
    # False for a run without reference answers: RAGAS computes only the metrics that read
    # none (inputs/references.py).
    references: bool = True

    @property
    def rubric_reads_reference(self) -> bool:
        """Whether the rubric shows the judge the ground truth."""
        return self.rubric is not None and GROUND_TRUTH_INPUT in self.rubric.inputs

    def describe(self) -> list[str]:
        """Lines for the pre-run summary."""
        lines = []
        if RAGAS_FAMILY in self.names:
            how = (
                f"embeddings with {self.question_embeddings.description}"
                if self.question_embeddings is not None
                else "a direct rating call"
            )
            lines.append(f"RAGAS answer relevance: {how}")
        if self.rubric is not None:
            criteria = ", ".join(
                f"{criterion.name} ({criterion.scale.label()})"
                for criterion in self.rubric.criteria
            )
            lines.append(f"Rubric: {criteria}")
        return lines


def _semantic_installed() -> bool:
    try:
        embeddings.require_semantic_extra(embeddings.SEMANTIC_FEATURE)
    except MissingExtraError:
        return False
    return True


def prepare_llm_families(
    names: Sequence[str], options: LlmFamilyOptions, working_directory: Path
) -> LlmFamilySetup:
    """Check the LLM families' options and read the rubric; a ``UsageError``/``InputError``
    says what to fix before anything is read or sent."""
    method = options.answer_relevance.strip().lower()
    if method not in ANSWER_RELEVANCE_METHODS:
        raise UsageError(
            f"--answer-relevance {options.answer_relevance!r} is not a method. Use "
            f"{', '.join(ANSWER_RELEVANCE_METHODS)}"
        )
    if RUBRIC_FAMILY in names and options.rubric_path is None:
        raise UsageError(
            "--metrics rubric needs the criteria: give them with --rubric FILE (a .toml or "
            ".yaml file; see the README's rubric example)"
        )
    if options.rubric_path is not None and RUBRIC_FAMILY not in names:
        raise UsageError(
            "--rubric is read by the rubric family only. Add rubric to --metrics (e.g. "
            "--metrics judge,rubric) or leave --rubric out"
        )
    rubric = (
        load_rubric(options.rubric_path, working_directory)
        if options.rubric_path is not None
        else None
    )
    question_embeddings = None
    resolved = METHOD_RATING
    if RAGAS_FAMILY in names:
        if method == METHOD_EMBEDDINGS:
            embeddings.require_semantic_extra(EMBEDDINGS_FEATURE)
            resolved = METHOD_EMBEDDINGS
        elif method == AUTO and _semantic_installed():
            resolved = METHOD_EMBEDDINGS
        elif method == AUTO:
            logger.info(
                "RAGAS answer relevance: a direct rating call (install the semantic extra to "
                "compare generated questions by embeddings)"
            )
        if resolved == METHOD_EMBEDDINGS:
            question_embeddings = QuestionEmbeddings(options.embedding_model)
    return LlmFamilySetup(tuple(names), rubric, resolved, question_embeddings)


def build_llm_families(setup: LlmFamilySetup) -> list[JudgedFamily[Any]]:
    """The LLM families of the run, in column order."""
    families: list[JudgedFamily[Any]] = []
    for name in setup.names:
        if name == RAGAS_FAMILY:
            embedder = setup.question_embeddings
            families.append(
                RagasFamily(
                    embedder,
                    embedder.description if embedder is not None else None,
                    RAGAS_METRICS if setup.references else RAGAS_REFERENCE_FREE,
                )
            )
        elif name == FACTUAL_ACCURACY_FAMILY:
            families.append(FactualAccuracyFamily())
        elif name == CLASSIFY_FAMILY:
            families.append(ClassifyFamily())
        elif name == MATCH_FAMILY:
            families.append(MatchFamily())
        elif name == RUBRIC_FAMILY and setup.rubric is not None:
            families.append(RubricFamily(setup.rubric))
    return families


def ragas_input_warnings(
    names: Sequence[str], items: Sequence[EvaluationItem], *, references: bool = True
) -> list[str]:
    """A warning naming the questions whose context metrics RAGAS must leave empty (without
    references only faithfulness reads the contexts)."""
    if RAGAS_FAMILY not in names:
        return []
    lacking = [item.question_number for item in items if item.contexts is None]
    if not lacking:
        return []
    metrics = (
        "faithfulness, context precision and context recall are"
        if references
        else "faithfulness is"
    )
    return [
        f"ragas: {metrics} left empty for {len(lacking)} of {len(items)} question(s): no "
        f"{CONTEXTS} in the answers file (question {format_numbers(lacking, 10)})"
    ]
