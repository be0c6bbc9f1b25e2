"""What the precision/recall/accuracy judge produced for one question.

Pure records shared by the judge family, the checkpoint, the results file and the summary.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_evaluator.families.base import FamilyResult
from rag_evaluator.inputs.records import Verdict


@dataclass(slots=True)
class Scores:
    """The three binary scores of one verdict.

    Never changed once built: ``shared`` hands out one object per combination, so a million
    results hold eight of them rather than a million. A score is ``None`` only in a jury's
    verdict, where the jurors that scored tied on that metric.
    """

    precision: int | None
    recall: int | None
    accuracy: int | None

    @classmethod
    def of(cls, verdict: Verdict) -> Scores:
        return cls.shared(verdict.precision, verdict.recall, verdict.accuracy)

    @classmethod
    def shared(cls, precision: int | None, recall: int | None, accuracy: int | None) -> Scores:
        key = (precision, recall, accuracy)
        found = _SHARED_SCORES.get(key)
        if found is None:
            found = _SHARED_SCORES.setdefault(key, cls(precision, recall, accuracy))
        return found

    def label(self) -> str:
        """``1/0/1``: precision/recall/accuracy (``-`` for a tied jury metric)."""
        return "/".join(
            "-" if score is None else str(score)
            for score in (self.precision, self.recall, self.accuracy)
        )


_SHARED_SCORES: dict[tuple[int | None, int | None, int | None], Scores] = {}


@dataclass(slots=True)
class Vote:
    """One of the consensus calls: its scores, or why it produced none."""

    scores: Scores | None
    error: str | None = None

    def label(self) -> str:
        return self.scores.label() if self.scores is not None else "error"


@dataclass(kw_only=True, slots=True)
class JudgeResult(FamilyResult):
    """The judge's final word on one question, as checkpointed and reported.

    ``scores`` is ``None`` for an unscored question, whose reason is in ``error``.
    For a consensus question ``initial_scores`` holds the first (hedging) verdict and
    ``votes`` the three extra calls; ``scores`` is then their majority.
    The judge's full reasoning is deliberately not kept; ``summary`` is.
    """

    scores: Scores | None = None
    summary: str = ""
    consensus: bool = False
    initial_scores: Scores | None = None
    votes: tuple[Vote, ...] = ()
    hedge_phrases: tuple[str, ...] = ()
    note: str | None = None
    # Scored without a call: "no_information" (both texts say so) or "missing_answer"
    # (``--score-missing``).
    shortcut: str | None = None

    def votes_label(self) -> str:
        """``first 1/1/1; votes 0/0/1, 0/0/1, 1/1/1`` for a consensus row, else empty."""
        if not self.consensus:
            return ""
        first = self.initial_scores.label() if self.initial_scores is not None else "error"
        votes = ", ".join(vote.label() for vote in self.votes)
        return f"first {first}; votes {votes}"
