"""Recognising texts that only say no information is available ("I don't know").

When both the RAG answer and the ground truth are such a statement the question
scores 1/1/1 without a call to the judge. Recognition is deliberately conservative:
the whole text, at most a couple of short sentences, must be nothing but such a
statement. "The report does not say" or an answer that hedges and then answers
anyway is sent to the judge as usual.
"""

from __future__ import annotations

import re

from rag_evaluator.core.judge_results import JudgeResult, Scores

MAX_STATEMENT_CHARACTERS = 200
NO_INFORMATION_NOTE = (
    "answer and ground truth both say no information is available; "
    "scored 1/1/1 without calling the judge"
)
NO_INFORMATION_SUMMARY = (
    "Both the answer and the ground truth state that no information is available."
)

_APOLOGY = r"(?:(?:i'?m |i am )?sorry|unfortunately)[,]? "
_SOURCE = (
    r"(?: (?:in|from|based on|within) (?:the |this |my )?"
    r"(?:provided |given |available |retrieved |supplied )?"
    r"(?:context|contexts|documents?|sources?|knowledge base|data|information|passages?))?"
)
_ABOUT = r"(?: (?:about|on|regarding|for) (?:this|that|the|your) (?:question|topic|query|subject))?"
_TO_ANSWER = r"(?: to answer (?:this|that|the|your) (?:question|query))?"
_STATEMENTS = (
    # I don't know (the answer) (to this question)
    r"i (?:don'?t|do not) know(?: the answer)?(?: to (?:this|that|the|your) (?:question|query))?",
    # (there is) no (relevant) information (is) (available|found)
    r"(?:there (?:is|was) |there'?s )?no (?:relevant |such )?information"
    r"(?: (?:is |was )?(?:available|found|provided|given))?",
    # I could not find (any) (relevant) information
    r"(?:i )?(?:could not|couldn'?t|cannot|can'?t|was unable to|am unable to|did not|didn'?t)"
    r" find (?:any )?(?:relevant )?(?:information|an answer|the answer)",
    # the answer / this information is not available
    r"(?:the |this |that |such )?(?:answer|information) (?:is|was) not "
    r"(?:available|provided|found|known|given|mentioned)",
    # the context does not contain (enough) information
    r"(?:the |this )?(?:provided |given )?(?:context|documents?|sources?) (?:does|do) not "
    r"(?:contain|include|provide|mention) (?:any |enough |the |this |that |relevant )*"
    r"(?:information|answer)",
    # not enough information
    r"(?:there is )?(?:not enough|insufficient) information",
)
_STATEMENT = re.compile(
    rf"(?:{_APOLOGY})?(?:{'|'.join(_STATEMENTS)}){_ABOUT}{_TO_ANSWER}{_SOURCE}{_ABOUT}{_TO_ANSWER}"
)


def _sentences(text: str) -> list[str]:
    normalised = text.casefold().replace("\u2019", "'").replace("\u2018", "'")
    normalised = " ".join(normalised.split())
    return [part.strip(" ,") for part in re.split(r"[.!?;]+", normalised) if part.strip(" ,")]


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
