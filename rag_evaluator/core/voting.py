"""Hedging detection in the judge's reasoning and the per-metric majority of consensus votes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from rag_evaluator.core.question_results import QuestionResult, Scores, Vote
from rag_evaluator.core.records import JudgeOutcome
from rag_evaluator.errors import UsageError

DEFAULT_HEDGE_PHRASES: tuple[str, ...] = (
    "borderline",
    "arguably",
    "unclear",
    "could go either way",
)
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

    return Scores(
        precision=majority([scores.precision for scores in pool]),
        recall=majority([scores.recall for scores in pool]),
        accuracy=majority([scores.accuracy for scores in pool]),
    )


def combine_outcomes(
    question_number: int,
    first: JudgeOutcome,
    hedges: tuple[str, ...] = (),
    votes: Sequence[JudgeOutcome] = (),
) -> QuestionResult:
    """Turn the first judging of a question, and the consensus votes if any, into its result.

    ``hedges`` are the trigger phrases found in the first verdict's reasoning; when there
    are any, ``votes`` are the extra judgings and the scores are their majority.
    """
    usage = sum((vote.usage for vote in votes), first.usage)
    calls = first.calls + sum(vote.calls for vote in votes)
    if first.verdict is None:
        return QuestionResult(
            question_number,
            scores=None,
            error=first.error or "the judge returned no verdict",
            usage=usage,
            calls=calls,
        )
    initial = Scores.of(first.verdict)
    if not hedges:
        return QuestionResult(
            question_number, initial, summary=first.verdict.summary, usage=usage, calls=calls
        )
    vote_records = tuple(
        Vote(Scores.of(vote.verdict)) if vote.verdict is not None else Vote(None, vote.error)
        for vote in votes
    )
    usable = [vote for vote in votes if vote.verdict is not None]
    final = majority_scores(initial, [Scores.of(vote.verdict) for vote in usable if vote.verdict])
    # The row's summary should explain the final scores: take it from the first vote
    # that agrees with the majority on all three metrics.
    agreeing = next(
        (vote.verdict for vote in usable if vote.verdict and Scores.of(vote.verdict) == final),
        None,
    )
    summary = agreeing.summary if agreeing is not None else first.verdict.summary
    failed = len(votes) - len(usable)
    note = None
    if failed and not usable:
        note = f"all {failed} consensus calls failed; the first verdict was kept"
    elif failed:
        tie_break = "; the first verdict broke ties" if len(usable) % 2 == 0 else ""
        note = f"{failed} of {len(votes)} consensus calls failed{tie_break}"
    return QuestionResult(
        question_number,
        final,
        summary=summary,
        consensus=True,
        initial_scores=initial,
        votes=vote_records,
        hedge_phrases=hedges,
        note=note,
        usage=usage,
        calls=calls,
    )
