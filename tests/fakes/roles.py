"""The roles the fake API plays, and the answer each gives when a test scripts none.

A request's role is read from its output schema's top-level property names (the contract
of issue 10): ``claims``, ``verdicts``, ``contexts``, ``statements``, ``attributions``,
``questions``, ``score`` (a direct rating), ``correctness`` (factual accuracy), ``label``
(classify), ``is_matching`` (match), ``criteria`` (rubric); anything else is the precision/
recall/accuracy ``judge``. Default answers are read from the tagged texts of the request:
claims are the answer's sentences and all supported, every context is relevant, statements
are the ground truth's sentences and all attributed, an answer is never noncommittal, a
rubric criterion gets its scale's top score.
"""

from __future__ import annotations

import html
import re
from typing import Any

JUDGE = "judge"
CLAIMS = "claims"
VERDICTS = "verdicts"
CONTEXTS = "contexts"
STATEMENTS = "statements"
ATTRIBUTIONS = "attributions"
QUESTIONS = "questions"
RATING = "score"
FACTUAL_ACCURACY = "correctness"
LABEL = "label"
MATCH = "is_matching"
CRITERIA = "criteria"
# In the order they are looked for among the schema's properties ("score" last: it is the
# only property of the rating that other roles might one day share).
ROLES = (
    CLAIMS,
    VERDICTS,
    CONTEXTS,
    STATEMENTS,
    ATTRIBUTIONS,
    QUESTIONS,
    FACTUAL_ACCURACY,
    LABEL,
    MATCH,
    CRITERIA,
    RATING,
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CONTEXT = re.compile(r'<context index="(\d+)">(.*?)</context>', re.DOTALL)
_CLAIM = re.compile(r"<claim>(.*?)</claim>", re.DOTALL)
_STATEMENT = re.compile(r"<statement>(.*?)</statement>", re.DOTALL)
_CRITERION = re.compile(r'<criterion name="([^"]*)" scale="([^"]*)">')
_RANGE = re.compile(r"(-?\d+)-(-?\d+)")


def role_of(body: Any) -> str:
    """The role a Messages request asks the fake to play."""
    if not isinstance(body, dict):
        return JUDGE
    return role_of_schema(((body.get("output_config") or {}).get("format") or {}).get("schema"))


def role_of_schema(schema: Any) -> str:
    """The role an output schema asks for, wherever the request carries it."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return JUDGE
    return next((role for role in ROLES if role in properties), JUDGE)


def tag_text(user_message: str, tag: str) -> str | None:
    found = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", user_message, re.DOTALL)
    return html.unescape(found.group(1)).strip() if found else None


def sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text.strip()) if part.strip()]


def default_answer(role: str, body: dict[str, Any], user_message: str, system: str) -> Any:
    """What the fake answers for ``role`` when nothing is scripted (``None`` for the judge,
    whose default is the server's ``verdict()``)."""
    if role == CLAIMS:
        return {"claims": sentences(tag_text(user_message, "rag_answer") or "")}
    if role == VERDICTS:
        return {
            "verdicts": [
                {"claim": html.unescape(claim), "reason": "Stated in context 1.", "supported": 1}
                for claim in _CLAIM.findall(user_message)
            ]
        }
    if role == CONTEXTS:
        return {
            "contexts": [
                {
                    "index": int(index),
                    "reasoning": "It answers the question.",
                    "relevant": True,
                    "score": 90,
                }
                for index, _ in _CONTEXT.findall(user_message)
            ]
        }
    if role == STATEMENTS:
        return {"statements": sentences(tag_text(user_message, "ground_truth") or "")}
    if role == ATTRIBUTIONS:
        return {
            "attributions": [
                {"statement": html.unescape(text), "attributed": 1, "supporting_context": 1}
                for text in _STATEMENT.findall(user_message)
            ]
        }
    if role == QUESTIONS:
        answer = tag_text(user_message, "rag_answer") or ""
        asked = [f"What does this say: {sentence.rstrip('.!?')}?" for sentence in sentences(answer)]
        return questions_answer((asked * 3)[:3])
    if role == RATING:
        return rating_answer(1.0)
    if role == FACTUAL_ACCURACY:
        return factual_accuracy_answer()
    if role == LABEL:
        return {"reasoning": "The answer agrees with the ground truth.", "label": "CORRECT"}
    if role == MATCH:
        return {"reasoning": "The answer conveys the ground truth.", "is_matching": True}
    if role == CRITERIA:
        return {"criteria": [_top_score(name, scale) for name, scale in _CRITERION.findall(system)]}
    return None


def questions_answer(questions: list[str], *, noncommittal: bool = False) -> dict[str, Any]:
    """An answer-relevance questions reply (the fake's default: committal)."""
    return {"questions": questions, "noncommittal": noncommittal}


def rating_answer(
    score: float,
    *,
    noncommittal: bool = False,
    reasoning: str = "The answer addresses the question directly.",
) -> dict[str, Any]:
    """A direct answer-relevance rating (the fake's default: 1.0, committal)."""
    return {"reasoning": reasoning, "noncommittal": noncommittal, "score": score}


def _top_score(name: str, scale: str) -> dict[str, Any]:
    found = _RANGE.fullmatch(scale)
    top = int(found.group(2)) if found else 1
    return {"name": html.unescape(name), "reasoning": "Meets the criterion fully.", "score": top}


def factual_accuracy_answer(
    correctness: int = 90, completeness: int = 80, consistency: int = 100, confidence: int = 85
) -> dict[str, Any]:
    """A factual-accuracy reply (the fake's default: 0.5*90 + 0.3*80 + 0.2*100 = 89, grade A)."""
    return {
        "correctness": {"reasoning": "The facts agree.", "score": correctness},
        "completeness": {"reasoning": "The key points are there.", "score": completeness},
        "consistency": {"reasoning": "No contradiction.", "score": consistency},
        "overall_reasoning": "Accurate and mostly complete.",
        "confidence": confidence,
    }
