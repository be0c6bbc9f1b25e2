"""How failed calls become a family's ``error`` and ``failure``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rag_evaluator.llm.requests import CallOutcome, FailureKind


def reason(outcome: CallOutcome) -> str:
    return outcome.error or "the model returned no usable answer"


def failure_kind(outcomes: Iterable[CallOutcome]) -> str:
    """``transient`` when any failed call ran out of transient retries, else ``question``."""
    failed = [outcome for outcome in outcomes if not outcome.ok]
    if any(outcome.failure is FailureKind.TRANSIENT for outcome in failed):
        return FailureKind.TRANSIENT.value
    return FailureKind.QUESTION.value


def joined(metric_errors: Sequence[tuple[str, str]]) -> str | None:
    """``faithfulness: <reason>; answer_relevance: <reason>``, or ``None`` without errors."""
    if not metric_errors:
        return None
    return "; ".join(f"{metric}: {text}" for metric, text in metric_errors)
