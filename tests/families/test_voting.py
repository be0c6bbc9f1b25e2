"""Hedging detection and the consensus majority."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.errors import UsageError
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.results import Scores
from rag_evaluator.families.judge.voting import (
    DEFAULT_HEDGE_PHRASES,
    combine_outcomes,
    find_hedge_phrases,
    majority_scores,
    parse_hedge_phrases,
)
from rag_evaluator.inputs.records import TokenUsage, Verdict
from rag_evaluator.llm.requests import CallOutcome, FailureKind


@pytest.mark.parametrize(
    ("reasoning", "expected"),
    [
        ("This is a borderline case.", ("borderline",)),
        ("BORDERLINE: the figure is close.", ("borderline",)),
        ("It is, arguably, complete.", ("arguably",)),
        ("Whether 'annual' applies is unclear.", ("unclear",)),
        ("The recall could go either way.", ("could go either way",)),
        ("The recall could go\neither   way here.", ("could go either way",)),
        ("A borderline-acceptable answer.", ("borderline",)),
        ("Unclear and arguably wrong.", ("arguably", "unclear")),
    ],
)
def test_trigger_phrases_are_found_as_whole_words_in_any_case(
    reasoning: str, expected: tuple[str, ...]
) -> None:
    assert find_hedge_phrases(reasoning, DEFAULT_HEDGE_PHRASES) == expected


@pytest.mark.parametrize(
    "reasoning",
    [
        "The borderlines between the regions are listed correctly.",
        "The answer is written unclearly but states the same facts.",
        "Its unclearness does not change the facts.",
        "Inarguably correct.",
        "The value could go up either way the market moves.",
        "It could go either wayward.",
        "The answer is clear and complete.",
    ],
)
def test_near_misses_do_not_trigger_consensus(reasoning: str) -> None:
    assert find_hedge_phrases(reasoning, DEFAULT_HEDGE_PHRASES) == ()


def test_custom_phrases_replace_the_defaults() -> None:
    phrases = parse_hedge_phrases("debatable, Not Sure ,,debatable")
    assert phrases == ("debatable", "Not Sure")
    assert find_hedge_phrases("I am not sure this is right", phrases) == ("Not Sure",)
    assert find_hedge_phrases("This is borderline.", phrases) == ()


def test_an_empty_phrase_list_turns_consensus_off() -> None:
    assert parse_hedge_phrases("") == ()
    assert find_hedge_phrases("borderline, arguably unclear", ()) == ()


def test_a_phrase_without_letters_is_refused() -> None:
    with pytest.raises(UsageError, match="--hedge-phrases"):
        parse_hedge_phrases("borderline, ??")


def test_phrases_with_regex_characters_match_literally() -> None:
    phrases = parse_hedge_phrases("50/50, (maybe)")
    assert find_hedge_phrases("It is 50/50 whether it counts.", phrases) == ("50/50",)
    assert find_hedge_phrases("It is 5050.", phrases) == ()


scores_strategy = st.builds(Scores, st.integers(0, 1), st.integers(0, 1), st.integers(0, 1))


@given(scores_strategy, st.lists(scores_strategy, min_size=3, max_size=3))
def test_majority_of_three_votes_ignores_the_first_verdict(
    initial: Scores, votes: list[Scores]
) -> None:
    result = majority_scores(initial, votes)
    for metric in ("precision", "recall", "accuracy"):
        ones = sum(getattr(vote, metric) for vote in votes)
        assert getattr(result, metric) == (1 if ones >= 2 else 0)


def test_the_first_verdict_breaks_ties_when_a_vote_failed() -> None:
    assert majority_scores(Scores(1, 1, 1), [Scores(0, 0, 1), Scores(1, 0, 0)]) == Scores(1, 0, 1)
    assert majority_scores(Scores(0, 1, 0), []) == Scores(0, 1, 0)


def _outcome(
    precision: int, recall: int, accuracy: int, reasoning: str = "fine", summary: str = "ok"
) -> CallOutcome:
    verdict = Verdict(precision, recall, accuracy, reasoning, summary)
    return CallOutcome(verdict, {}, None, None, TokenUsage(10, 2), 1)


def test_consensus_overturns_the_first_verdict_and_keeps_an_agreeing_summary() -> None:
    first = _outcome(1, 1, 1, "borderline", "first")
    votes = [_outcome(0, 0, 1, summary="no"), _outcome(0, 0, 1), _outcome(1, 1, 1)]
    result = combine_outcomes(first, ("borderline",), votes)
    assert result.scores == Scores(0, 0, 1)
    assert result.consensus
    assert result.initial_scores == Scores(1, 1, 1)
    assert result.summary == "no"
    assert result.votes_label() == "first 1/1/1; votes 0/0/1, 0/0/1, 1/1/1"


def test_a_per_metric_majority_that_no_vote_gave_says_so_instead_of_contradicting_it() -> None:
    # Votes 1/1/0, 1/0/1, 0/1/1: the majority is 1/1/1, which no single vote gave.
    first = _outcome(1, 1, 1, "a close call", "Correct and complete.")
    votes = [
        _outcome(1, 1, 0, summary="Off topic."),
        _outcome(1, 0, 1, summary="Incomplete."),
        _outcome(0, 1, 1, summary="Wrong and incomplete."),
    ]
    result = combine_outcomes(first, ("close call",), votes)
    assert result.scores == Scores(1, 1, 1)
    assert result.summary == (
        "No single vote gave 1/1/1; the scores are the per-metric majority of the votes "
        "(1/1/0, 1/0/1, 0/1/1)."
    )


def test_failed_votes_are_recorded_and_noted() -> None:
    first = _outcome(1, 0, 1, "unclear")
    failed = CallOutcome(None, None, "API overloaded (529)", FailureKind.TRANSIENT, TokenUsage(), 5)
    result = combine_outcomes(first, ("unclear",), [failed, _outcome(0, 0, 0), failed])
    # One usable vote is an odd pool: it decides alone, the first verdict does not vote.
    assert result.scores == Scores(0, 0, 0)
    assert result.votes_label() == "first 1/0/1; votes error, 0/0/0, error"
    assert result.note == "2 of 3 consensus calls failed"


def test_an_unscored_first_call_has_no_scores_and_keeps_the_reason() -> None:
    result = combine_outcomes(
        CallOutcome(
            None,
            None,
            "judge output was not valid JSON after 3 calls",
            FailureKind.QUESTION,
            TokenUsage(5, 1),
            3,
        )
    )
    assert result.scores is None
    assert not result.scored
    assert result.error == "judge output was not valid JSON after 3 calls"
    assert result.failure == "question"


def test_the_default_prompts_own_wording_for_a_close_call_triggers_consensus() -> None:
    # The built-in prompt asks the judge to say so plainly when a score is a close call.
    assert "close call" in DEFAULT_SYSTEM_PROMPT
    reasoning = "Recall is a close call: the answer omits the finance step for large amounts."
    assert find_hedge_phrases(reasoning, DEFAULT_HEDGE_PHRASES) == ("close call",)


@given(st.text(max_size=80))
def test_any_hedge_phrase_option_parses_or_is_a_usage_error(raw: str) -> None:
    try:
        phrases = parse_hedge_phrases(raw)
    except UsageError:
        return
    for phrase in phrases:
        assert find_hedge_phrases(f"so {phrase} here", phrases)
