"""Recognising texts that only say no information is available ("I don't know").

When both the RAG answer and the ground truth are such a statement the question
scores 1/1/1 without a call to the judge. The statements are the abstentions and refusals of
``text/non_answers`` (the list ``dont_know``, quality and the report read too), seed 001's
phrases except a bare "unknown". Recognition is deliberately conservative:
the whole text, at most a couple of short sentences, must be nothing but such a
statement. "The report does not say" or an answer that hedges and then answers
anyway is sent to the judge as usual.
"""

from __future__ import annotations

import re

from rag_evaluator.families.judge.results import JudgeResult, Scores
from rag_evaluator.text import non_answers

MAX_STATEMENT_CHARACTERS = 200
NO_INFORMATION_NOTE = (
    "answer and ground truth both say no information is available; "
    "scored 1/1/1 without calling the judge"
)
NO_INFORMATION_SUMMARY = (
    "Both the answer and the ground truth state that no information is available."
)

_APOLOGY = (
    r"(?:(?:(?:i'?m |i am |we'?re |we are )?(?:very |so |really |truly )?sorry|unfortunately|"
    r"apologies|i apologi[sz]e)(?:,? but)?[,:;\-–— ]+)"
)
_DISCLAIMER = r"(?:as an ai(?: language model| assistant)?|as a language model),? "
# What may follow the statement: where the information is missing, what it is about, and
# that it could not be given ("... the opening hours in the provided documents to answer
# this question"): a few words each, never a clause that goes on to answer ("but ...").
_WORD = r"(?:(?!(?:but|however|although|though|yet|and|so|because|instead)\b)[\w'-]+)"
_FEW_WORDS = rf"(?:{_WORD} ){{0,4}}{_WORD}"
_DETERMINER = (
    r"(?:the|this|that|these|those|a|an|any|your|my|its|their|his|her|such|what|when|where|"
    r"who|how|which|whether)"
)
_TAIL = (
    r"(?: (?:is |was |are |were )?(?:available|found|provided|given|known|mentioned)"
    r"| (?:to|for|about|on|regarding|in|from|within|based on|of|with|at) "
    rf"(?:{_DETERMINER} )?{_FEW_WORDS}"
    rf"| to (?:answer|respond to|address|determine|provide|say)(?: (?:{_DETERMINER} )?"
    rf"{_FEW_WORDS})?"
    rf"| {_DETERMINER} {_FEW_WORDS}"
    r"| (?:at the moment|at this time|right now|currently))"
)
# A bare "Unknown" can be the answer ("Who wrote it?" "Unknown."): it is not a statement
# that no information is available.
_CLAUSES = tuple(
    pattern
    for pattern in non_answers.NON_ANSWER_PATTERNS
    if pattern != non_answers.phrase_pattern("unknown")
)
# What the statement is about, before it: "The retrieval date (is not mentioned)".
_TOPIC = rf"(?:(?:the|this|that|its|their|his|her|your|my) (?:{_WORD} ){{0,2}}{_WORD} )"
_STATEMENT = re.compile(
    rf"{_APOLOGY}?(?:{_DISCLAIMER})?{_TOPIC}?(?:{'|'.join(_CLAUSES)})(?:{_TAIL}){{0,4}}"
)


_SENTENCE_ENDS = re.compile(r"[.!?;]+")


def _sentences(text: str) -> list[str]:
    normalised = non_answers.folded(text)
    return [kept for part in _SENTENCE_ENDS.split(normalised) if (kept := part.strip(" ,"))]


def says_no_information(text: str) -> bool:
    """True when ``text`` is only a short statement that no information is available."""
    if len(text.strip()) > MAX_STATEMENT_CHARACTERS:
        return False
    sentences = _sentences(text)
    if not sentences or len(sentences) > 2:
        return False
    return all(_STATEMENT.fullmatch(sentence) for sentence in sentences)


def opens_with_no_information(text: str) -> bool:
    """True when a sentence of ``text`` begins with such a statement ("I couldn't find any
    information about pets in the handbook."), however it goes on: looser than
    ``says_no_information``, for flagging answers to look at, never for scoring."""
    return any(_STATEMENT.match(sentence) for sentence in _sentences(text))


def both_say_no_information(rag_answer: str, ground_truth: str) -> bool:
    """True when the answer and the ground truth both only say no information is available."""
    return says_no_information(rag_answer) and says_no_information(ground_truth)


def no_information_result() -> JudgeResult:
    """The 1/1/1 result given without a judge call when both texts say there is no information."""
    return JudgeResult(
        scores=Scores(1, 1, 1),
        summary=NO_INFORMATION_SUMMARY,
        note=NO_INFORMATION_NOTE,
    )
