"""Hedging detection in the judge's reasoning and the per-metric majority of consensus votes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from rag_evaluator.errors import UsageError
from rag_evaluator.families.defaults import DEFAULT_HEDGE_PHRASES as DEFAULT_HEDGE_PHRASES
from rag_evaluator.families.judge.results import JudgeResult, Scores, Vote
from rag_evaluator.inputs.records import Verdict
from rag_evaluator.llm.requests import CallOutcome, FailureKind

CONSENSUS_VOTES = 3


def parse_hedge_phrases(raw: str) -> tuple[str, ...]:
    """Parse ``--hedge-phrases``: a comma-separated list; an empty value turns consensus off."""
    phrases: list[str] = []
    for part in raw.split(","):
        phrase = " ".join(part.split())
        if not phrase:
            continue
        if not re.search(r"\w", phrase):
            raise UsageError(
                f"--hedge-phrases item {phrase!r} has no letters or digits. "
                "Give words or phrases separated by commas, e.g. 'borderline,unclear'"
            )
        if phrase.casefold() not in (existing.casefold() for existing in phrases):
            phrases.append(phrase)
    return tuple(phrases)


@lru_cache(maxsize=64)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    # Whole words only: "unclear" must not fire inside "unclearly", nor "borderline"
    # inside "borderlines". Words of a phrase may be split by any whitespace (line breaks).
    words = (re.escape(word) for word in phrase.split())
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


def find_hedge_phrases(reasoning: str, phrases: Iterable[str]) -> tuple[str, ...]:
    """The phrases (as configured) that occur as whole words in ``reasoning``, any case."""
    return tuple(phrase for phrase in phrases if _phrase_pattern(phrase).search(reasoning))


def majority_scores(initial: Scores, votes: Sequence[Scores]) -> Scores:
    """Majority per metric over the consensus votes that produced a verdict.

    The first (hedging) verdict does not vote, except to keep the count odd when some
    consensus calls failed: with 2 or 0 usable votes it is added as the deciding vote,
    so a tie can never happen.
    """
    pool = list(votes)
    if len(pool) % 2 == 0:
        pool.append(initial)
    threshold = len(pool) / 2

    def majority(values: list[int]) -> int:
        return 1 if sum(values) > threshold else 0

    return Scores.shared(
        majority([scores.precision for scores in pool]),
        majority([scores.recall for scores in pool]),
        majority([scores.accuracy for scores in pool]),
    )


def _verdict(outcome: CallOutcome) -> Verdict | None:
    return outcome.value if outcome.ok and isinstance(outcome.value, Verdict) else None


def majority_summary(final: Scores, votes: Sequence[Verdict]) -> str:
    """The Reasoning of a consensus row: the summary of the first vote whose scores equal the
    final ones; when no vote does (each metric went its own way), a sentence saying so."""
    agreeing = next((vote for vote in votes if Scores.of(vote) == final), None)
    if agreeing is not None:
        return agreeing.summary
    labels = ", ".join(Scores.of(vote).label() for vote in votes)
    return (
        f"No single vote gave {final.label()}; the scores are the per-metric majority of the "
        f"votes ({labels})."
    )


def combine_outcomes(
    first: CallOutcome,
    hedges: tuple[str, ...] = (),
    votes: Sequence[CallOutcome] = (),
) -> JudgeResult:
    """Turn the first judging of a question, and the consensus votes if any, into its result.

    ``hedges`` are the trigger phrases found in the first verdict's reasoning; when there
    are any, ``votes`` are the extra judgings and the scores are their majority. Usage and
    calls are left for the engine to fill in.
    """
    first_verdict = _verdict(first)
    if first_verdict is None:
        return JudgeResult(
            error=first.error or "the judge returned no verdict",
            failure=first.failure.value if first.failure else FailureKind.QUESTION.value,
        )
    initial = Scores.of(first_verdict)
    if not hedges:
        return JudgeResult(scores=initial, summary=first_verdict.summary)
    vote_verdicts = [_verdict(vote) for vote in votes]
    vote_records = tuple(
        Vote(Scores.of(verdict)) if verdict is not None else Vote(None, vote.error)
        for vote, verdict in zip(votes, vote_verdicts, strict=True)
    )
    usable = [verdict for verdict in vote_verdicts if verdict is not None]
    final = majority_scores(initial, [Scores.of(verdict) for verdict in usable])
    failed = len(votes) - len(usable)
    note = None
    if failed and not usable:
        note = f"all {failed} consensus calls failed; the first verdict was kept"
        summary = first_verdict.summary
    else:
        summary = majority_summary(final, usable)
        if failed:
            tie_break = "; the first verdict broke ties" if len(usable) % 2 == 0 else ""
            note = f"{failed} of {len(votes)} consensus calls failed{tie_break}"
    return JudgeResult(
        scores=final,
        summary=summary,
        consensus=True,
        initial_scores=initial,
        votes=vote_records,
        hedge_phrases=hedges,
        note=note,
    )
