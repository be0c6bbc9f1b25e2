"""Records that cross module boundaries: the rows of the three input files.

The rows and items, built once per question and file, are read-only by convention rather
than frozen: a frozen dataclass sets each field through ``object.__setattr__``, which made
building them a sixth of the time before a 100,000-question run's first call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Generic, TypeVar

RowT = TypeVar("RowT")

# Shared by every question without metadata columns: no empty dict per question.
NO_METADATA: Mapping[str, str] = MappingProxyType({})


@dataclass(slots=True)
class QuestionRow:
    """A row of questions.csv."""

    question_number: int
    question: str
    # Metadata columns (Category, Source, ...) by header, carried into the results.
    metadata: Mapping[str, str] = field(default_factory=lambda: NO_METADATA)


@dataclass(slots=True)
class GroundTruthRow:
    """A row of ground_truth.csv; the list columns are ``None`` when absent or blank."""

    question_number: int
    ground_truth: str
    relevant_contexts: list[str] | None = None
    required_facts: list[str] | None = None
    # Several acceptable reference answers (Reference Answers); None: the ground truth alone.
    reference_answers: tuple[str, ...] | None = None


@dataclass(slots=True)
class AnswerRow:
    """A row of rag_answers.csv; ``contexts`` and ``retrieval_scores`` are ``None`` when the
    column is absent or blank (the scores, when given, are parallel to the contexts)."""

    question_number: int
    rag_answer: str
    contexts: list[str] | None = None
    retrieval_scores: tuple[float, ...] | None = None


@dataclass(frozen=True)
class KeyedRows(Generic[RowT]):
    """Rows of one input file keyed by question number, first occurrence kept."""

    source_name: str
    rows: dict[int, RowT]
    duplicate_numbers: list[int] = field(default_factory=list)


@dataclass(slots=True)
class EvaluationItem:
    """One question present in all three files: everything needed to score it."""

    question_number: int
    question: str
    ground_truth: str
    rag_answer: str
    contexts: list[str] | None = None
    relevant_contexts: list[str] | None = None
    required_facts: list[str] | None = None
    # No row in the answers file (kept only with --score-missing; the answer is then "").
    answer_missing: bool = False
    # The retrieval system's score of each context (Retrieval Scores), None when not reported.
    retrieval_scores: tuple[float, ...] | None = None
    # The question's metadata columns (Category, Source, ...), for the results and --group-by.
    metadata: Mapping[str, str] = field(default_factory=lambda: NO_METADATA)
    # Several acceptable reference answers; None: the ground truth is the one reference.
    reference_answers: tuple[str, ...] | None = None

    def references(self) -> tuple[str, ...]:
        """The reference answers the offline metrics compare the answer with."""
        return self.reference_answers or (self.ground_truth,)


@dataclass(slots=True)
class TokenUsage:
    """Tokens the API reported for one or more calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


@dataclass(frozen=True)
class Verdict:
    """The judge's binary scores for one answer, with its reasoning and short summary."""

    precision: int
    recall: int
    accuracy: int
    reasoning: str
    summary: str
