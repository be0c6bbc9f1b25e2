"""What judging one question produced, and one row of the results table.

Pure records shared by the checkpoint, the results file, the summary and the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_evaluator.core.records import EvaluationItem, TokenUsage, Verdict


@dataclass(frozen=True)
class Scores:
    """The three binary scores of one verdict."""

    precision: int
    recall: int
    accuracy: int

    @classmethod
    def of(cls, verdict: Verdict) -> Scores:
        return cls(verdict.precision, verdict.recall, verdict.accuracy)

    def label(self) -> str:
        """``1/0/1``: precision/recall/accuracy."""
        return f"{self.precision}/{self.recall}/{self.accuracy}"


@dataclass(frozen=True)
class Vote:
    """One of the consensus calls: its scores, or why it produced none."""

    scores: Scores | None
    error: str | None = None

    def label(self) -> str:
        return self.scores.label() if self.scores is not None else "error"


@dataclass(frozen=True)
class QuestionResult:
    """The judge's final word on one question, as checkpointed and reported.

    ``scores`` is ``None`` for an unscored question, whose reason is in ``error``.
    For a consensus question ``initial_scores`` holds the first (hedging) verdict and
    ``votes`` the three extra calls; ``scores`` is then their majority.
    The judge's full reasoning is deliberately not kept; ``summary`` is.
    """

    question_number: int
    scores: Scores | None
    summary: str = ""
    error: str | None = None
    consensus: bool = False
    initial_scores: Scores | None = None
    votes: tuple[Vote, ...] = ()
    hedge_phrases: tuple[str, ...] = ()
    note: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    calls: int = 0

    @property
    def scored(self) -> bool:
        return self.scores is not None

    def votes_label(self) -> str:
        """``first 1/1/1; votes 0/0/1, 0/0/1, 1/1/1`` for a consensus row, else empty."""
        if not self.consensus:
            return ""
        first = self.initial_scores.label() if self.initial_scores is not None else "error"
        votes = ", ".join(vote.label() for vote in self.votes)
        return f"first {first}; votes {votes}"


@dataclass(frozen=True)
class ResultRow:
    """One row of the results table: the item, the judge's result and offline metric values.

    ``judge`` is ``None`` when the run did not use the judge.
    ``metric_scores`` maps a snake_case metric column to 0..1, or ``None`` when its
    inputs were missing for this question.
    """

    item: EvaluationItem
    judge: QuestionResult | None
    metric_scores: dict[str, float | None] = field(default_factory=dict)
